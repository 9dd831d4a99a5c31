package tensorjson

import (
	"fmt"
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
