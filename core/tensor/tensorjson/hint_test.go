package tensorjson

import (
	"fmt"
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

func TestValueCounts(t *testing.T) {
	type kv = KeyValues
	tests := []struct {
		name string
		body string
		max  int
		want []kv
	}{
		{"one flat input", `{"x": [1, 2, 3]}`, 10, []kv{{[]byte("x"), 3}}},
		{"several inputs", `{"a": [[1, 2], [3, 4]], "b": 7, "c": [true,false,null]}`, 10,
			[]kv{{[]byte("a"), 4}, {[]byte("b"), 1}, {[]byte("c"), 3}}},
		{"whitespace around colons", " \n{ \"a\" :\t[1,2] ,\r\n\"b\"\n:[3]}", 10, []kv{{[]byte("a"), 2}, {[]byte("b"), 1}}},
		{"strings with commas, colons and escaped quotes raise counts only", `{"s": ["a,b", "c\":d", "\\"], "n": [1]}`, 10,
			[]kv{{[]byte("s"), 4}, {[]byte("n"), 1}}},
		{"escaped key kept as written", `{"a\"b": [1, 2]}`, 10, []kv{{[]byte(`a\"b`), 2}}},
		{"empty object", `{}`, 10, nil},
		{"empty array", `{"x": []}`, 10, []kv{{[]byte("x"), 1}}},
		{"not an object", `[1, 2]`, 10, nil},
		{"empty body", ``, 10, nil},
		{"too many strings", `{"s": ["a", "b", "c"]}`, 3, nil},
		{"unterminated string", `{"x": [1, 2], "y`, 10, []kv{{[]byte("x"), 3}}},
	}
	for _, tt := range tests {
		got := ValueCounts([]byte(tt.body), tt.max)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ValueCounts(%s) = %s, want %s", tt.name, tt.body, showCounts(got), showCounts(tt.want))
		}
	}
}

// TestValueCountsBoundEveryInput: for bodies of several inputs of every
// type, nested and flat, each key's count is at least the values decoded
// for it, and exactly that for the numeric and boolean inputs.
func TestValueCountsBoundEveryInput(t *testing.T) {
	specs := []tensor.Spec{
		spec("f", tensor.Float32, -1, 3), spec("i", tensor.Int64, -1), spec("b", tensor.Bool, -1, 2),
		spec("s", tensor.String, -1), spec("h", tensor.Float16, -1),
	}
	body := `{"f": [[1, 2.5, -3e2], [4, 5, 6]], "i": [9, 8, 7, 6, 5], "s": ["x,y", "z"], "b": [[true, false]], "h": [0.5]}`
	counts := ValueCounts([]byte(body), 100)
	d := NewDecoder([]byte(body), len(specs))
	defer d.Release()
	err := d.Object(func(key []byte) error {
		for i := range specs {
			if specs[i].Name != string(key) {
				continue
			}
			got, err := d.Value(&specs[i])
			if err != nil {
				return err
			}
			var n int64 = -1
			for _, c := range counts {
				if string(c.Key) == string(key) {
					n = c.Values
				}
			}
			exact := specs[i].DType != tensor.String
			if n < int64(got.Len()) || (exact && n != int64(got.Len())) {
				t.Errorf("%s: count %d for %d values", key, n, got.Len())
			}
			return nil
		}
		t.Fatalf("unexpected key %s", key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func showCounts(cs []KeyValues) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s=%d ", c.Key, c.Values)
	}
	return b.String()
}

func TestStringCounts(t *testing.T) {
	type kv = KeyValues
	tests := []struct {
		name string
		body string
		want []kv
	}{
		{"one picture", `{"x": "aGVsbG8="}`, []kv{{[]byte("x"), 1}}},
		{"a list and a number", `{"x": ["a", "b,c", "d\"e"], "n": 3}`, []kv{{[]byte("x"), 3}, {[]byte("n"), 0}}},
		{"nested lists", ` {"x" : [["a", "b"], ["c"]] ,"t":"z"}`, []kv{{[]byte("x"), 3}, {[]byte("t"), 1}}},
		{"data URLs", `{"x": ["data:image/png;base64,AAAA", "data:image/png;base64,BBBB"]}`, []kv{{[]byte("x"), 2}}},
		{"not an object", `["a"]`, nil},
		{"unterminated", `{"x": ["a", "b`, []kv{{[]byte("x"), 1}}},
	}
	for _, tt := range tests {
		if got := StringCounts([]byte(tt.body)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: StringCounts(%s) = %s, want %s", tt.name, tt.body, showCounts(got), showCounts(tt.want))
		}
	}
}
