package tensorjson

import (
	"errors"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// decodeObject is a minimal object layer over Decoder for the tests here: a
// JSON object mapping input names to values, one tensor per spec. The real
// object layers (with their messages) belong to the protocols.
func decodeObject(body []byte, specs []tensor.Spec) ([]*tensor.Tensor, error) {
	d := NewDecoder(body, len(specs))
	defer d.Release()
	out := make([]*tensor.Tensor, len(specs))
	d.SkipSpace()
	if c, _ := d.Peek(); c != '{' {
		return nil, errors.New("not an object")
	}
	d.Advance(1)
	d.SkipSpace()
	for c, _ := d.Peek(); c != '}'; c, _ = d.Peek() {
		key, kerr := d.Key()
		if kerr != nil {
			return nil, kerr
		}
		k := -1
		for i := range specs {
			if string(key) == specs[i].Name {
				k = i
			}
		}
		if k < 0 {
			return nil, errors.New("unknown input")
		}
		d.SkipSpace()
		t, err := d.Value(&specs[k])
		if err != nil {
			return nil, err
		}
		out[k] = t
		d.SkipSpace()
		if c, _ := d.Peek(); c == ',' {
			d.Advance(1)
			d.SkipSpace()
		}
	}
	d.Advance(1)
	d.SkipSpace()
	if _, more := d.Peek(); more {
		return nil, d.Unexpected("after top-level value")
	}
	return out, nil
}

func spec(name string, d tensor.DType, shape ...int64) tensor.Spec {
	if shape == nil {
		shape = []int64{}
	}
	return tensor.Spec{Name: name, DType: d, Shape: shape, Required: true}
}

// decodeOne decodes body with one spec and returns its tensor.
func decodeOne(t *testing.T, s tensor.Spec, body string) *tensor.Tensor {
	t.Helper()
	out, err := decodeObject([]byte(body), []tensor.Spec{s})
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return out[0]
}
