package tensorjson

import (
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// decodeHinted decodes body's only input with a size hint of n.
func decodeHinted(body []byte, s tensor.Spec, n int64) (*tensor.Tensor, error) {
	d := NewDecoder(body, 1)
	defer d.Release()
	d.SizeHint(n)
	var out *tensor.Tensor
	err := d.Object(func(key []byte) error {
		var err error
		out, err = d.Value(&s)
		return err
	})
	return out, err
}

func TestSizeHintGivesTheSameTensors(t *testing.T) {
	tests := []struct {
		spec tensor.Spec
		body string
	}{
		{spec("x", tensor.Float32, -1, 3), `{"x": [[1.5, 2, 3], [4, 5, 6.25]]}`},
		{spec("x", tensor.Float64, 4), `{"x": [1e300, -2, 3.5, 0]}`},
		{spec("x", tensor.Float16, -1), `{"x": [1, 0.5, -2]}`},
		{spec("x", tensor.BFloat16, -1), `{"x": [1, 0.5]}`},
		{spec("x", tensor.Int8, -1), `{"x": [-128, 127]}`},
		{spec("x", tensor.Int16, -1), `{"x": [1, 2, 3]}`},
		{spec("x", tensor.Int32, -1), `{"x": [1, 2, 3]}`},
		{spec("x", tensor.Int64, -1, 2), `{"x": [[1, 2], [3, 4], [5, 6]]}`},
		{spec("x", tensor.Uint8, -1), `{"x": [0, 255]}`},
		{spec("x", tensor.Uint16, -1), `{"x": [0, 65535]}`},
		{spec("x", tensor.Uint32, -1), `{"x": [7]}`},
		{spec("x", tensor.Uint64, -1), `{"x": [18446744073709551615]}`},
		{spec("x", tensor.Bool, -1), `{"x": [true, false, true]}`},
		{spec("x", tensor.Float32), `{"x": 2.5}`},
		{spec("x", tensor.Float32, -1), `{"x": []}`},
		{spec("x", tensor.String, -1), `{"x": ["a", "b,c"]}`},
	}
	for _, tt := range tests {
		want := decodeOne(t, tt.spec, tt.body)
		commas := int64(strings.Count(tt.body, ","))
		// Exact, too small (the slice grows) and too large hints.
		for _, hint := range []int64{commas + 1, 1, commas + 100} {
			got, err := decodeHinted([]byte(tt.body), tt.spec, hint)
			if err != nil {
				t.Fatalf("%s with hint %d: %v", tt.body, hint, err)
			}
			if !reflect.DeepEqual(got.Shape, want.Shape) || !reflect.DeepEqual(got.Data, want.Data) || got.DType != want.DType {
				t.Fatalf("%s with hint %d: %+v, want %+v", tt.body, hint, got, want)
			}
		}
	}
}

func TestSizeHintTensorsDoNotShareMemory(t *testing.T) {
	s := spec("x", tensor.Float32, -1)
	a, err := decodeHinted([]byte(`{"x": [1, 2, 3]}`), s, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The decoders come from a pool: the next one must not write into the
	// slice the first tensor took over, hinted or not.
	for _, hint := range []int64{3, 0} {
		if _, err := decodeHinted([]byte(`{"x": [7, 8, 9]}`), s, hint); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Data.([]float32); !reflect.DeepEqual(got, []float32{1, 2, 3}) {
		t.Fatalf("first tensor changed to %v", got)
	}
}

func TestSizeHintAfterAnError(t *testing.T) {
	s := spec("x", tensor.Int64, -1)
	if _, err := decodeHinted([]byte(`{"x": [1, 2, "three"]}`), s, 3); err == nil {
		t.Fatal("no error for a string in an int64 array")
	}
	// The decoder the failed request used goes back to the pool; the next
	// request is decoded whole.
	got, err := decodeHinted([]byte(`{"x": [4, 5]}`), s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Data, []int64{4, 5}) {
		t.Fatalf("got %v", got.Data)
	}
}

func TestCountValues(t *testing.T) {
	for _, tt := range []struct {
		body   string
		limit  int64
		commas int64
		over   bool
	}{
		{`{"x": [1, 2, 3]}`, 10, 2, false},
		{`{"x": [1, 2, 3]}`, 2, 2, true},
		{`{"x": "a,b"}`, 1, 1, false},
	} {
		commas, _, over := CountValues([]byte(tt.body), tt.limit)
		if commas != tt.commas || over != tt.over {
			t.Errorf("CountValues(%s, %d) = %d, %v; want %d, %v", tt.body, tt.limit, commas, over, tt.commas, tt.over)
		}
	}
}
