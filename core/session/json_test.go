package session_test

import (
	"fmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// decodeRequest reads a JSON object of input name → value into tensors in
// spec order: enough of an object layer for core's tests, which drive the
// predictor the way a protocol does without importing one.
func decodeRequest(body []byte, specs []tensor.Spec) ([]*tensor.Tensor, error) {
	d := tensorjson.NewDecoder(body, len(specs))
	defer d.Release()
	out := make([]*tensor.Tensor, len(specs))
	err := d.Object(func(key []byte) error {
		for i := range specs {
			if string(key) == specs[i].Name {
				t, err := d.Value(&specs[i])
				out[i] = t
				return err
			}
		}
		return fmt.Errorf("unknown input %q", key)
	})
	if err != nil {
		return nil, err
	}
	for i, s := range specs {
		if s.Required && out[i] == nil {
			return nil, fmt.Errorf("missing input %q", s.Name)
		}
	}
	return out, nil
}

// resultJSON writes a result as {"output": value, ...} in output order, a
// rank-0 tensor as a one-element array, maps as objects.
func resultJSON(r core.Runner, res core.Result) (string, error) {
	outs := r.Info().Outputs
	b := []byte{'{'}
	for i := 0; i < res.Len(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%q:", outs[i].Name)
		v, err := res.Value(i)
		if err != nil {
			return "", err
		}
		b = appendValue(b, v)
	}
	return string(append(b, '}')), nil
}

func appendValue(b []byte, v core.Value) []byte {
	switch v.Kind {
	case core.KindSequence:
		b = append(b, '[')
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, item)
		}
		return append(b, ']')
	case core.KindMap:
		b = append(b, '{')
		for i := 0; i < v.Keys.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			k := tensorjson.AppendJSON(nil, v.Keys.Element(i))
			if k[0] != '"' {
				k = append(append([]byte{'"'}, k...), '"')
			}
			b = append(append(b, k...), ':')
			b = tensorjson.AppendJSON(b, v.Values.Element(i))
		}
		return append(b, '}')
	}
	if len(v.Tensor.Shape) == 0 {
		return append(tensorjson.AppendJSON(append(b, '['), v.Tensor), ']')
	}
	return tensorjson.AppendJSON(b, v.Tensor)
}
