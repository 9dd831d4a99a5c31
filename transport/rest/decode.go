package rest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// DecodeRequest parses a whole /predict body in one pass: a JSON object
// mapping input names to (nested arrays of) values. It returns one tensor
// per spec, in spec order, nil for an optional input that was absent.
//
// Client mistakes are reported as *tensorjson.Error, whose Message is the
// 400's detail; a spec with an invalid DType is a programming error
// reported as a plain error. DecodeRequest is safe for concurrent use. The
// returned tensors do not refer to body.
func DecodeRequest(body []byte, specs []tensor.Spec) ([]*tensor.Tensor, error) {
	return decodeRequest(body, specs, 0, 0, nil)
}

// hintedValues is the least count of values in a body for which a model of
// several inputs has the body's keys and value counts looked up
// (tensorjson.ValueCounts), so that each large input is allocated once.
const hintedValues = 256

// decodeRequest is DecodeRequest with string elements capped at maxString
// bytes (0 = no cap). values, when positive, bounds the body's values (its
// commas plus one): the tensors are allocated at their size once
// (tensorjson.Decoder.SizeHint) rather than collected in a scratch buffer
// that grows by copying and is copied out. For a model of one input the
// bound is its input's; for several, the body's scan (sc, the handler's
// one pass over it; nil: none) bounds each key.
func decodeRequest(body []byte, specs []tensor.Spec, maxString int, values int64, sc *tensorjson.Scan) ([]*tensor.Tensor, error) {
	for i := range specs {
		if !specs[i].DType.Valid() {
			return nil, fmt.Errorf("rest: input %q has unsupported dtype %v", specs[i].Name, specs[i].DType)
		}
	}
	d := tensorjson.NewDecoder(body, len(specs))
	defer d.Release()
	d.LimitStrings(maxString)
	var counts []tensorjson.KeyValues
	switch {
	case len(specs) == 1 && values > 0:
		d.SizeHint(values)
	case len(specs) > 1 && values >= hintedValues && sc != nil && sc.Strings <= int64(4*len(specs)+16):
		// Past a few strings per input, the body is mostly strings,
		// which take no hint.
		counts = make([]tensorjson.KeyValues, len(sc.Keys))
		for i, k := range sc.Keys {
			counts[i] = tensorjson.KeyValues{Key: k.Key, Values: k.Values}
		}
	}
	return decodeObject(d, specs, counts, values)
}

// hintFor is the value count counts give for key, or 0.
func hintFor(counts []tensorjson.KeyValues, key []byte) int64 {
	for _, c := range counts {
		if string(c.Key) == string(key) {
			return c.Values
		}
	}
	return 0
}

// decodeObject decodes the body's object; counts, when not nil, give each
// key's size hint, at most values.
func decodeObject(d tensorjson.Decoder, specs []tensor.Spec, counts []tensorjson.KeyValues, values int64) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(specs))
	err := d.Object(func(key []byte) error {
		k := -1
		for i := range specs {
			if string(key) == specs[i].Name {
				k = i
				break
			}
		}
		if k < 0 {
			return unknownInput(string(key), specs)
		}
		if out[k] != nil {
			return &tensorjson.Error{Input: specs[k].Name, Message: "Duplicate input '" + transport.Quote(string(key)) + "'"}
		}
		if counts != nil {
			d.SizeHint(min(hintFor(counts, key), values))
		}
		t, err := d.Value(&specs[k])
		if err != nil {
			return err
		}
		out[k] = t
		return nil
	})
	if errors.Is(err, tensorjson.ErrNotObject) {
		return nil, &tensorjson.Error{Message: "Request body must be a JSON object mapping input names to values"}
	}
	if err != nil {
		return nil, err
	}
	for i := range specs {
		if specs[i].Required && out[i] == nil {
			return nil, &tensorjson.Error{Input: specs[i].Name, Message: "Missing required input: '" + specs[i].Name + "'"}
		}
	}
	return out, nil
}

func unknownInput(key string, specs []tensor.Spec) *tensorjson.Error {
	var sb strings.Builder
	sb.WriteString("Unknown input '")
	sb.WriteString(transport.Quote(key))
	if len(specs) == 0 {
		sb.WriteString("'; the model has no inputs")
	} else {
		sb.WriteString("'; the model's inputs are: ")
		for i := range specs {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("'" + specs[i].Name + "'")
		}
	}
	return &tensorjson.Error{Input: key, Message: sb.String()}
}
