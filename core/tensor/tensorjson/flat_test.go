package tensorjson

import (
	"errors"
	"reflect"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

func decodeFlat(s tensor.Spec, shape []int64, body string) (*tensor.Tensor, error) {
	d := NewDecoder([]byte(body), 1)
	defer d.Release()
	t, err := d.Flat(&s, shape)
	if err != nil {
		return nil, err
	}
	d.SkipSpace()
	if _, more := d.Peek(); more {
		return nil, d.Unexpected("after value")
	}
	return t, nil
}

func TestFlat(t *testing.T) {
	dyn := func(name string, d tensor.DType, shape ...int64) tensor.Spec {
		return tensor.Spec{Name: name, DType: d, Shape: shape}
	}
	tests := []struct {
		name  string
		spec  tensor.Spec
		shape []int64
		give  string
		want  any
	}{
		{"flat float32", dyn("x", tensor.Float32, -1, 2), []int64{2, 2}, `[1, 2.5, -3, 4e2]`, []float32{1, 2.5, -3, 400}},
		{"nested float32", dyn("x", tensor.Float32, -1, 2), []int64{2, 2}, `[[1, 2.5], [-3, 4e2]]`, []float32{1, 2.5, -3, 400}},
		{"float64", dyn("x", tensor.Float64, -1), []int64{3}, `[0.1, 1e300, -0]`, []float64{0.1, 1e300, 0}},
		{"float16", dyn("x", tensor.Float16, -1), []int64{2}, `[1, 65504]`, []uint16{0x3c00, 0x7bff}},
		{"bfloat16", dyn("x", tensor.BFloat16, -1), []int64{2}, `[1, -2]`, []uint16{0x3f80, 0xc000}},
		{"int8", dyn("x", tensor.Int8, -1), []int64{2}, `[-128, 127]`, []int8{-128, 127}},
		{"int16", dyn("x", tensor.Int16, -1), []int64{2}, `[-32768, 32767]`, []int16{-32768, 32767}},
		{"int32", dyn("x", tensor.Int32, -1), []int64{1}, `[-2147483648]`, []int32{-2147483648}},
		{"int64", dyn("x", tensor.Int64, 2, -1), []int64{2, 1}, `[[9007199254740993], [-1]]`, []int64{9007199254740993, -1}},
		{"uint8", dyn("x", tensor.Uint8, -1), []int64{2}, `[0, 255]`, []uint8{0, 255}},
		{"uint16", dyn("x", tensor.Uint16, -1), []int64{1}, `[65535]`, []uint16{65535}},
		{"uint32", dyn("x", tensor.Uint32, -1), []int64{1}, `[4294967295]`, []uint32{4294967295}},
		{"uint64", dyn("x", tensor.Uint64, -1), []int64{1}, `[18446744073709551615]`, []uint64{18446744073709551615}},
		{"bool nested", dyn("x", tensor.Bool, -1, 2), []int64{1, 2}, `[[true, false]]`, []bool{true, false}},
		{"string", dyn("x", tensor.String, -1), []int64{2}, `["a", "\u00e9"]`, []string{"a", "é"}},
		{"rank 0 bare", dyn("x", tensor.Float32), []int64{}, `3`, []float32{3}},
		{"rank 0 in an array", dyn("x", tensor.Float32), []int64{}, `[3]`, []float32{3}},
		{"one element bare", dyn("x", tensor.Int64, -1, 1), []int64{1, 1}, `7`, []int64{7}},
		{"unknown rank", tensor.Spec{Name: "x", DType: tensor.Int32}, []int64{2, 1, 2}, `[1, 2, 3, 4]`, []int32{1, 2, 3, 4}},
		{"empty flat", dyn("x", tensor.Float32, -1, 3), []int64{0, 3}, `[]`, []float32{}},
		{"empty nested", dyn("x", tensor.Float32, 2, -1), []int64{2, 0}, `[[], []]`, []float32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeFlat(tt.spec, tt.shape, tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Data, tt.want) || !reflect.DeepEqual(got.Shape, tt.shape) || got.DType != tt.spec.DType {
				t.Errorf("got %v %v %v, want %v %v", got.DType, got.Shape, got.Data, tt.shape, tt.want)
			}
		})
	}
}

func TestFlatErrors(t *testing.T) {
	f32 := tensor.Spec{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 2}}
	tests := []struct {
		name  string
		spec  tensor.Spec
		shape []int64
		give  string
		want  string
	}{
		{"too few", f32, []int64{2, 2}, `[1, 2, 3]`, "Invalid input for 'x': shape [2, 2] needs 4 elements, got 3"},
		{"too many", f32, []int64{1, 2}, `[1, 2, 3]`, "Invalid input for 'x': shape [1, 2] needs 2 elements, got 3"},
		{"other nesting", tensor.Spec{Name: "x", DType: tensor.Float32}, []int64{2, 2}, `[[1], [2], [3], [4]]`, "Invalid input for 'x': data nested as [4, 1] does not match shape [2, 2]"},
		{"ragged", f32, []int64{2, 2}, `[[1, 2], [3]]`, "Invalid input for 'x': ragged array: element [1] has 1 items, expected 2"},
		{"bare value for many", f32, []int64{1, 2}, `1`, "Invalid input type for 'x': expected array"},
		{"bare value of another kind", tensor.Spec{Name: "x", DType: tensor.Float32, Shape: []int64{}}, []int64{}, `"a"`, "Invalid input type for 'x': expected array"},
		{"not an integer", tensor.Spec{Name: "ids", DType: tensor.Int64, Shape: []int64{-1}}, []int64{3}, `[1, 2, 2.5]`, "Invalid value for 'ids' at [2]: 2.5 is not an integer (int64)"},
		{"out of range", tensor.Spec{Name: "u", DType: tensor.Uint8, Shape: []int64{-1}}, []int64{1}, `[256]`, "Invalid value for 'u' at [0]: 256 is out of range for uint8"},
		{"wrong element kind", tensor.Spec{Name: "b", DType: tensor.Bool, Shape: []int64{-1}}, []int64{2}, `[true, 1]`, "Invalid value for 'b' at [1]: expected a boolean, got a number"},
		{"negative dimension", f32, []int64{-1, 2}, `[]`, "Invalid shape for 'x': [-1, 2] has a negative dimension"},
		{"overflow", tensor.Spec{Name: "x", DType: tensor.Float32}, []int64{1 << 40, 1 << 40}, `[]`, "Invalid shape for 'x': [1099511627776, 1099511627776] has too many elements"},
		{"rank against the spec", f32, []int64{4}, `[1, 2, 3, 4]`, "Invalid shape for 'x': expected rank 2 [-1, 2], got rank 1 [4]"},
		{"fixed dimension against the spec", f32, []int64{2, 1}, `[1, 2]`, "Invalid shape for 'x': expected [-1, 2], got [2, 1]"},
		{"malformed", f32, []int64{1, 2}, `[1, 2`, "Invalid JSON body: unexpected end of input at offset 5"},
		{"garbage", f32, []int64{1, 2}, `[1, x]`, "Invalid JSON body: invalid character 'x' looking for beginning of value at offset 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeFlat(tt.spec, tt.shape, tt.give)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if e.Message != tt.want {
				t.Errorf("message %q\nwant    %q", e.Message, tt.want)
			}
		})
	}
	d := NewDecoder([]byte(`[1]`), 1)
	defer d.Release()
	if _, err := d.Flat(&tensor.Spec{Name: "x"}, []int64{1}); err == nil {
		t.Error("an invalid dtype was accepted")
	}
}

// Flat decodes several tensors from one body, between object keys, like
// the Open Inference Protocol's inputs.
func TestFlatInsideObject(t *testing.T) {
	body := []byte(`{"a": [1, 2, 3, 4], "b": [["x"], ["y"]]}`)
	d := NewDecoder(body, 2)
	defer d.Release()
	d.Advance(1)
	var got []*tensor.Tensor
	for _, s := range []struct {
		spec  tensor.Spec
		shape []int64
	}{
		{tensor.Spec{Name: "a", DType: tensor.Int32}, []int64{2, 2}},
		{tensor.Spec{Name: "b", DType: tensor.String}, []int64{2, 1}},
	} {
		d.SkipSpace()
		if _, err := d.Key(); err != nil {
			t.Fatal(err)
		}
		d.SkipSpace()
		tt, err := d.Flat(&s.spec, s.shape)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tt)
		d.SkipSpace()
		d.Advance(1)
	}
	if !reflect.DeepEqual(got[0].Data, []int32{1, 2, 3, 4}) || !reflect.DeepEqual(got[1].Data, []string{"x", "y"}) ||
		!reflect.DeepEqual(got[1].Shape, []int64{2, 1}) {
		t.Errorf("got %v %v", got[0], got[1])
	}
}
