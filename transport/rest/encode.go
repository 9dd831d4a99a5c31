package rest

import (
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// outputKeys encodes each output's JSON object key, `"name":`, once per
// model.
func outputKeys(outputs []core.OutputSpec) [][]byte {
	keys := make([][]byte, len(outputs))
	for i, o := range outputs {
		key := tensorjson.AppendJSON(nil, &tensor.Tensor{DType: tensor.String, Shape: []int64{}, Data: []string{o.Name}})
		keys[i] = append(key, ':')
	}
	return keys
}

// AppendResult writes the outputs of a /predict as a JSON object keyed by
// output name, in the model's output order: tensors as nested arrays (a
// rank-0 output as a one-element array: every output value is an array),
// sequences as arrays, maps as objects whose numeric keys become strings.
func AppendResult(dst []byte, outputs []core.OutputSpec, res core.Result) ([]byte, error) {
	return appendResult(dst, outputKeys(outputs), res)
}

func appendResult(dst []byte, keys [][]byte, res core.Result) ([]byte, error) {
	return appendOutputs(dst, keys, res, nil, nil, false, nil)
}

func appendValue(dst []byte, v core.Value) []byte {
	switch v.Kind {
	case core.KindSequence:
		dst = append(dst, '[')
		for i, item := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, item)
		}
		return append(dst, ']')
	case core.KindMap:
		return appendMap(dst, v.Keys, v.Values)
	}
	if len(v.Tensor.Shape) == 0 {
		dst = append(dst, '[')
		dst = tensorjson.AppendJSON(dst, v.Tensor)
		return append(dst, ']')
	}
	return tensorjson.AppendJSON(dst, v.Tensor)
}

// appendMap writes a map as a JSON object; numeric keys become strings.
func appendMap(dst []byte, keys, vals *tensor.Tensor) []byte {
	dst = append(dst, '{')
	for i := 0; i < keys.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		k := keys.Element(i)
		if k.DType == tensor.String {
			dst = tensorjson.AppendJSON(dst, k)
		} else {
			dst = append(dst, '"')
			dst = tensorjson.AppendJSON(dst, k)
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		dst = tensorjson.AppendJSON(dst, vals.Element(i))
	}
	return append(dst, '}')
}
