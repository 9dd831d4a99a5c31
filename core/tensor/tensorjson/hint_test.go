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

// scanValues is the keys of a scan with their values' bounds.
func scanValues(body string) []KeyValues {
	var out []KeyValues
	for _, k := range ScanObject([]byte(body)).Keys {
		out = append(out, KeyValues{Key: k.Key, Values: k.Values})
	}
	return out
}

// TestScanValues: each key's bound of its values.
func TestScanValues(t *testing.T) {
	type kv = KeyValues
	tests := []struct {
		name string
		body string
		want []kv
	}{
		{"one flat input", `{"x": [1, 2, 3]}`, []kv{{[]byte("x"), 3}}},
		{"several inputs", `{"a": [[1, 2], [3, 4]], "b": 7, "c": [true,false,null]}`,
			[]kv{{[]byte("a"), 4}, {[]byte("b"), 1}, {[]byte("c"), 3}}},
		{"whitespace around colons", " \n{ \"a\" :\t[1,2] ,\r\n\"b\"\n:[3]}", []kv{{[]byte("a"), 2}, {[]byte("b"), 1}}},
		{"strings with commas, colons and escaped quotes raise counts only", `{"s": ["a,b", "c\":d", "\\"], "n": [1]}`,
			[]kv{{[]byte("s"), 4}, {[]byte("n"), 1}}},
		{"escaped key kept as written", `{"a\"b": [1, 2]}`, []kv{{[]byte(`a\"b`), 2}}},
		{"empty object", `{}`, nil},
		{"empty array", `{"x": []}`, []kv{{[]byte("x"), 1}}},
		{"not an object", `[1, 2]`, nil},
		{"empty body", ``, nil},
		{"unterminated string", `{"x": [1, 2], "y`, []kv{{[]byte("x"), 3}}},
	}
	for _, tt := range tests {
		if got := scanValues(tt.body); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: the scan of %s = %s, want %s", tt.name, tt.body, showCounts(got), showCounts(tt.want))
		}
	}
}

// TestScanBoundsEveryInput: for bodies of several inputs of every
// type, nested and flat, each key's count is at least the values decoded
// for it, and exactly that for the numeric and boolean inputs.
func TestScanBoundsEveryInput(t *testing.T) {
	specs := []tensor.Spec{
		spec("f", tensor.Float32, -1, 3), spec("i", tensor.Int64, -1), spec("b", tensor.Bool, -1, 2),
		spec("s", tensor.String, -1), spec("h", tensor.Float16, -1),
	}
	body := `{"f": [[1, 2.5, -3e2], [4, 5, 6]], "i": [9, 8, 7, 6, 5], "s": ["x,y", "z"], "b": [[true, false]], "h": [0.5]}`
	counts := scanValues(body)
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

// TestScanStrings: each key's strings.
func TestScanStrings(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string]int64
	}{
		{"one picture", `{"x": "aGVsbG8="}`, map[string]int64{"x": 1}},
		{"a list and a number", `{"x": ["a", "b,c", "d\"e"], "n": 3}`, map[string]int64{"x": 3, "n": 0}},
		{"nested lists", ` {"x" : [["a", "b"], ["c"]] ,"t":"z"}`, map[string]int64{"x": 3, "t": 1}},
		{"data URLs", `{"x": ["data:image/png;base64,AAAA", "data:image/png;base64,BBBB"]}`, map[string]int64{"x": 2}},
		{"not an object", `["a"]`, map[string]int64{}},
		{"unterminated", `{"x": ["a", "b`, map[string]int64{"x": 1}},
	}
	for _, tt := range tests {
		got := map[string]int64{}
		for _, k := range ScanObject([]byte(tt.body)).Keys {
			got[string(k.Key)] = k.Strings
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: strings of %s = %v, want %v", tt.name, tt.body, got, tt.want)
		}
	}
}

// TestScanObject: one pass gives what the counts above give, each key's
// first byte, and the escaped keys.
func TestScanObject(t *testing.T) {
	bodies := []string{
		`{"x": [1, 2, 3]}`,
		`{"a": [[1, 2], [3, 4]], "b": 7, "c": [true,false,null]}`,
		`{"s": ["a,b", "c\":d", "\\"], "n": [1]}`,
		`{"x": ["aGVsbG8=", "data:image/png;base64,AAAA"], "t": "z"}`,
		` {"x" : [["a", "b"], ["c"]] ,"t":"z"}`,
		`{}`, `[1, 2]`, ``,
	}
	for _, b := range bodies {
		s := ScanObject([]byte(b))
		commas := int64(0)
		if i := strings.IndexByte(b, '{'); i >= 0 {
			commas = int64(strings.Count(b[i:], ","))
		}
		if len(s.Keys) > 0 && s.Commas != commas {
			t.Errorf("%s: %d commas, want %d", b, s.Commas, commas)
		}
	}
	s := ScanObject([]byte(`{"text": "a", "n":  3, "te\u0078t": [1]}`))
	if s.Key("text").First != '"' || s.Key("n").First != '3' || !s.Escaped || s.Key("nope") != nil {
		t.Errorf("scan %+v", s)
	}
	for _, tt := range []struct {
		body  string
		limit int64
		over  bool
		input string
	}{{`{"x": [1, 2, 3]}`, 5, false, ""}, {`{"x": [1, 2, 3]}`, 2, true, "x"}, {`{"s": ["a,b,c,d"]}`, 2, false, ""}} {
		input, over := ScanObject([]byte(tt.body)).Over([]byte(tt.body), tt.limit)
		if over != tt.over || input != tt.input {
			t.Errorf("Over(%s, %d) = %q, %v", tt.body, tt.limit, input, over)
		}
	}
}
