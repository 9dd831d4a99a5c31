package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// iterations scales the size of randomized tests down for -short and for
// the (much slower) race detector.
func iterations(n int) int {
	if testing.Short() || raceEnabled {
		return n / 10
	}
	return n
}

func TestDTypeNames(t *testing.T) {
	want := []struct {
		d    DType
		name string
		size int
	}{
		{Float32, "float32", 4}, {Float64, "float64", 8}, {Float16, "float16", 2}, {BFloat16, "bfloat16", 2},
		{Int8, "int8", 1}, {Int16, "int16", 2}, {Int32, "int32", 4}, {Int64, "int64", 8},
		{Uint8, "uint8", 1}, {Uint16, "uint16", 2}, {Uint32, "uint32", 4}, {Uint64, "uint64", 8},
		{Bool, "bool", 1}, {String, "string", 0},
	}
	for _, w := range want {
		if got := w.d.String(); got != w.name {
			t.Errorf("DType(%d).String() = %q, want %q", w.d, got, w.name)
		}
		if got := w.d.Size(); got != w.size {
			t.Errorf("%v.Size() = %d, want %d", w.d, got, w.size)
		}
		if got, ok := ParseDType(w.name); !ok || got != w.d {
			t.Errorf("ParseDType(%q) = %v, %v", w.name, got, ok)
		}
	}
	for _, s := range []string{"", "invalid", "Float32", "float", "int", "double"} {
		if d, ok := ParseDType(s); ok {
			t.Errorf("ParseDType(%q) = %v, true; want false", s, d)
		}
	}
	if Invalid.String() != "invalid" || DType(200).String() != "invalid" || DType(200).Size() != 0 {
		t.Error("invalid dtypes")
	}
}

func spec(name string, d DType, shape ...int64) Spec {
	if shape == nil {
		shape = []int64{}
	}
	return Spec{Name: name, DType: d, Shape: shape, Required: true}
}

// decodeOne decodes body with one spec and returns its tensor.
func decodeOne(t *testing.T, s Spec, body string) *Tensor {
	t.Helper()
	out, err := DecodeRequest([]byte(body), []Spec{s})
	if err != nil {
		t.Fatalf("DecodeRequest(%s): %v", body, err)
	}
	return out[0]
}

func TestDecodeEveryDType(t *testing.T) {
	cases := []struct {
		d     DType
		value string
		shape []int64
		data  any
	}{
		{Float32, `[1.5, -2, 0, 3e2, 1E-1]`, []int64{5}, []float32{1.5, -2, 0, 300, 0.1}},
		{Float64, `[1.5, -2, 0.1, 1e308]`, []int64{4}, []float64{1.5, -2, 0.1, 1e308}},
		{Float16, `[1, -2.5, 65504, 0.0001, 6e-8]`, []int64{5}, []uint16{0x3c00, 0xc100, 0x7bff, 0x068e, 0x0001}},
		{BFloat16, `[1, -2.5, 3.0e38, 1e-40]`, []int64{4}, []uint16{0x3f80, 0xc020, 0x7f62, 0x0001}},
		{Int8, `[-128, 127, 0, 1e2]`, []int64{4}, []int8{-128, 127, 0, 100}},
		{Int16, `[-32768, 32767, 2.0]`, []int64{3}, []int16{-32768, 32767, 2}},
		{Int32, `[-2147483648, 2147483647]`, []int64{2}, []int32{math.MinInt32, math.MaxInt32}},
		{Int64, `[-9223372036854775808, 9223372036854775807, 9007199254740993]`, []int64{3}, []int64{math.MinInt64, math.MaxInt64, 9007199254740993}},
		{Uint8, `[0, 255, -0]`, []int64{3}, []uint8{0, 255, 0}},
		{Uint16, `[65535, 1]`, []int64{2}, []uint16{65535, 1}},
		{Uint32, `[4294967295]`, []int64{1}, []uint32{math.MaxUint32}},
		{Uint64, `[18446744073709551615, 18446744073709551614, 1.8446744073709551615e19]`, []int64{3}, []uint64{math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64}},
		{Bool, `[true, false]`, []int64{2}, []bool{true, false}},
		{String, `["a", "", "\u00e9\n"]`, []int64{3}, []string{"a", "", "é\n"}},
	}
	for _, c := range cases {
		t.Run(c.d.String(), func(t *testing.T) {
			got := decodeOne(t, spec("x", c.d, -1), `{"x": `+c.value+`}`)
			if got.DType != c.d || !reflect.DeepEqual(got.Shape, c.shape) || !reflect.DeepEqual(got.Data, c.data) {
				t.Errorf("got %v %v %#v, want %v %#v", got.DType, got.Shape, got.Data, c.shape, c.data)
			}
			if got.Len() != len(c.shape) && got.Len() != int(c.shape[0]) {
				t.Errorf("Len() = %d", got.Len())
			}
		})
	}
}

func TestDecodeShapes(t *testing.T) {
	cases := []struct {
		name  string
		spec  Spec
		value string
		shape []int64
		data  any
	}{
		{"exact", spec("x", Float32, 2, 2), `[[1,2],[3,4]]`, []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"dynamic", spec("x", Float32, -1, -1), `[[1,2,3]]`, []int64{1, 3}, []float32{1, 2, 3}},
		{"batch rule dynamic", spec("x", Float32, -1, 4), `[1,2,3,4]`, []int64{1, 4}, []float32{1, 2, 3, 4}},
		{"batch rule fixed 1", spec("x", Float32, 1, 2, 2), `[[1,2],[3,4]]`, []int64{1, 2, 2}, []float32{1, 2, 3, 4}},
		{"batch of two", spec("x", Float32, -1, 2), `[[1,2],[3,4]]`, []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"bare number [-1]", spec("x", Float32, -1), `7`, []int64{1}, []float32{7}},
		{"bare number [1]", spec("x", Int64, 1), `7`, []int64{1}, []int64{7}},
		{"bare bool [-1]", spec("x", Bool, -1), `true`, []int64{1}, []bool{true}},
		{"bare string [1]", spec("x", String, 1), `"hi"`, []int64{1}, []string{"hi"}},
		{"rank 0 number", spec("x", Float64), `2.5`, []int64{}, []float64{2.5}},
		{"rank 0 bool", spec("x", Bool), `false`, []int64{}, []bool{false}},
		{"rank 0 string", spec("x", String), `"s"`, []int64{}, []string{"s"}},
		{"rank 0 int", spec("x", Int32), `-3`, []int64{}, []int32{-3}},
		{"unknown rank scalar", Spec{Name: "x", DType: Float32}, `1`, []int64{}, []float32{1}},
		{"unknown rank 3", Spec{Name: "x", DType: Float32}, `[[[1],[2]]]`, []int64{1, 2, 1}, []float32{1, 2}},
		{"unknown rank empty", Spec{Name: "x", DType: Int8}, `[]`, []int64{0}, []int8{}},
		{"empty rank 1", spec("x", Float32, -1), `[]`, []int64{0}, []float32{}},
		{"empty inner", spec("x", Float32, -1, 0), `[[],[]]`, []int64{2, 0}, []float32{}},
		{"empty inner dynamic", spec("x", Float32, -1, -1, -1), `[[[]],[[]]]`, []int64{2, 1, 0}, []float32{}},
		{"empty batch", spec("x", Float32, -1, 3), `[]`, []int64{0, 3}, []float32{}},
		{"empty batch dynamic", spec("x", Float32, -1, -1), `[]`, []int64{0, 0}, []float32{}},
		{"empty rows", spec("x", Int32, -1, -1, 5), `[[], []]`, []int64{2, 0, 5}, []int32{}},
		{"empty fixed batch", spec("x", Float32, 2, 3), `[]`, nil, nil},
		{"empty strings", spec("x", String, -1), `[]`, []int64{0}, []string{}},
		{"whitespace", spec("x", Float32, -1, -1), " [ [ 1 , 2 ] ,\n\t[3,4]\r] ", []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"rank 4 batch", spec("x", Uint8, -1, 1, 2, 2), `[[[1,2],[3,4]]]`, []int64{1, 1, 2, 2}, []uint8{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := DecodeRequest([]byte(`{"x": `+c.value+`}`), []Spec{c.spec})
			if c.data == nil {
				if err == nil {
					t.Fatalf("want an error, got %v", out[0].Shape)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := out[0]
			if !reflect.DeepEqual(got.Shape, c.shape) || !reflect.DeepEqual(got.Data, c.data) {
				t.Errorf("got %#v %#v, want %#v %#v", got.Shape, got.Data, c.shape, c.data)
			}
			if got.Shape == nil {
				t.Error("Shape is nil")
			}
			if n := numElements(got.Shape); n != got.Len() {
				t.Errorf("Len() = %d, product(shape) = %d", got.Len(), n)
			}
		})
	}
}

func TestDecodeMultipleInputs(t *testing.T) {
	specs := []Spec{
		{Name: "ids", DType: Int64, Shape: []int64{-1, -1}, Required: true},
		{Name: "mask", DType: Int64, Shape: []int64{-1, -1}},
		{Name: "flags", DType: Bool, Shape: []int64{-1}},
		{Name: "text", DType: String, Shape: []int64{-1}},
		{Name: "temp", DType: Float32, Shape: []int64{}},
	}
	out, err := DecodeRequest([]byte(`{"text": ["a", "b"], "ids": [[1, 2, 3]], "temp": 0.5}`), specs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 || out[1] != nil || out[2] != nil {
		t.Fatalf("got %v", out)
	}
	if !reflect.DeepEqual(out[0].Data, []int64{1, 2, 3}) || !reflect.DeepEqual(out[3].Data, []string{"a", "b"}) ||
		!reflect.DeepEqual(out[4].Data, []float32{0.5}) || len(out[4].Shape) != 0 {
		t.Errorf("got %v %v %v", out[0], out[3], out[4])
	}
	// An empty object is fine when nothing is required.
	out, err = DecodeRequest([]byte(` { } `), specs[1:])
	if err != nil || len(out) != 4 || out[0] != nil {
		t.Errorf("empty object: %v %v", out, err)
	}
	out, err = DecodeRequest([]byte(`{}`), nil)
	if err != nil || len(out) != 0 {
		t.Errorf("no specs: %v %v", out, err)
	}
	// Escaped keys match the unescaped name.
	out, err = DecodeRequest([]byte(`{"\u0069ds": [[1]]}`), specs[:1])
	if err != nil || !reflect.DeepEqual(out[0].Data, []int64{1}) {
		t.Errorf("escaped key: %v %v", out, err)
	}
}

// errCase is a body that must fail with exactly msg.
type errCase struct {
	name  string
	specs []Spec
	body  string
	msg   string
}

func TestDecodeErrors(t *testing.T) {
	f := []Spec{spec("input", Float32, -1, 4)}
	two := []Spec{spec("a", Float32, -1), {Name: "b", DType: Int64, Shape: []int64{-1}}}
	img := []Spec{spec("x", Float32, -1, 3, 224, 224)}
	cases := []errCase{
		// Body shape.
		{"array body", f, `[1, 2]`, "Request body must be a JSON object mapping input names to values"},
		{"string body", f, `"x"`, "Request body must be a JSON object mapping input names to values"},
		{"number body", f, ` 12 `, "Request body must be a JSON object mapping input names to values"},
		{"null body", f, `null`, "Request body must be a JSON object mapping input names to values"},
		{"empty body", f, ``, "Invalid JSON body: unexpected end of input at offset 0"},
		{"blank body", f, "  \n", "Invalid JSON body: unexpected end of input at offset 3"},
		{"garbage body", f, `hello`, "Invalid JSON body: invalid character 'h' looking for beginning of value at offset 0"},
		{"malformed array body", f, `[1, 2`, "Invalid JSON body: unexpected end of input at offset 5"},
		{"trailing data", f, `{"input": [1,2,3,4]} x`, "Invalid JSON body: invalid character 'x' after top-level value at offset 21"},
		{"two objects", f, `{"input": [1,2,3,4]}{}`, "Invalid JSON body: invalid character '{' after top-level value at offset 20"},
		{"unterminated object", f, `{"input": [1,2,3,4]`, "Invalid JSON body: unexpected end of input at offset 19"},
		{"missing colon", f, `{"input" [1]}`, "Invalid JSON body: invalid character '[' after object key at offset 9"},
		{"bad key", f, `{input: 1}`, "Invalid JSON body: invalid character 'i' looking for beginning of object key string at offset 1"},
		{"trailing comma", f, `{"input": [1,2,3,4],}`, "Invalid JSON body: invalid character '}' looking for beginning of object key string at offset 20"},
		{"bad separator", f, `{"input": [1,2,3,4] "b": 1}`, "Invalid JSON body: invalid character '\"' after object key:value pair at offset 20"},
		{"trailing comma array", f, `{"input": [1,2,3,]}`, "Invalid JSON body: invalid character ']' looking for beginning of value at offset 17"},
		{"missing comma", f, `{"input": [1 2]}`, "Invalid JSON body: invalid character '2' after array element at offset 13"},
		{"bad number", f, `{"input": [1.]}`, "Invalid JSON body: invalid character ']' in numeric literal at offset 13"},
		{"leading zero", f, `{"input": [01]}`, "Invalid JSON body: invalid character '1' after array element at offset 12"},
		{"plus sign", f, `{"input": [+1]}`, "Invalid JSON body: invalid character '+' looking for beginning of value at offset 11"},
		{"bare minus", f, `{"input": [-]}`, "Invalid JSON body: invalid character ']' in numeric literal at offset 12"},
		{"bad exponent", f, `{"input": [1e+]}`, "Invalid JSON body: invalid character ']' in numeric literal at offset 14"},
		{"NaN literal", f, `{"input": [NaN]}`, "Invalid JSON body: invalid character 'N' looking for beginning of value at offset 11"},
		{"bad literal", f, `{"input": [nul]}`, "Invalid JSON body: invalid character ']' in literal null at offset 14"},
		{"truncated", f, `{"input": [[1,2`, "Invalid JSON body: unexpected end of input at offset 15"},
		{"control char in string", []Spec{spec("s", String, -1)}, "{\"s\": [\"a\x01\"]}", `Invalid JSON body: invalid character '\x01' in string literal at offset 9`},
		{"bad escape", []Spec{spec("s", String, -1)}, `{"s": ["a\x"]}`, `Invalid JSON body: invalid escape sequence in string literal at offset 9`},
		{"bad unicode escape", []Spec{spec("s", String, -1)}, `{"s": ["\u12G4"]}`, `Invalid JSON body: invalid \u escape in string literal at offset 8`},
		{"unterminated string", []Spec{spec("s", String, -1)}, `{"s": ["abc`, `Invalid JSON body: unexpected end of input at offset 11`},
		{"bad escape in key", f, `{"in\qput": 1}`, `Invalid JSON body: invalid escape sequence in string literal at offset 4`},
		{"non-ascii garbage", f, "{\"input\": [\xff]}", `Invalid JSON body: invalid character '\xff' looking for beginning of value at offset 11`},

		// Keys.
		{"unknown", two, `{"a": [1], "c": [1]}`, "Unknown input 'c'; the model's inputs are: 'a', 'b'"},
		{"unknown first", two, `{"zz": 1}`, "Unknown input 'zz'; the model's inputs are: 'a', 'b'"},
		{"unknown with bad value", two, `{"zz": [1, }`, "Unknown input 'zz'; the model's inputs are: 'a', 'b'"},
		{"unknown no inputs", nil, `{"zz": 1}`, "Unknown input 'zz'; the model has no inputs"},
		{"unknown long", two, `{"` + strings.Repeat("k", 500) + `": 1}`, "Unknown input '" + strings.Repeat("k", 64) + "...'; the model's inputs are: 'a', 'b'"},
		{"duplicate", two, `{"a": [1], "a": [2]}`, "Duplicate input 'a'"},
		{"duplicate escaped", two, `{"a": [1], "\u0061": [2]}`, "Duplicate input 'a'"},
		{"missing", two, `{"b": [1]}`, "Missing required input: 'a'"},
		{"missing empty", two, `{}`, "Missing required input: 'a'"},
		{"missing first in order", []Spec{spec("p", Float32, -1), spec("q", Float32, -1)}, `{}`, "Missing required input: 'p'"},
		{"malformed beats missing", two, `{"b": [1]`, "Invalid JSON body: unexpected end of input at offset 9"},

		// Kinds of values.
		{"object for tensor", f, `{"input": {"a": 1}}`, "Invalid input type for 'input': expected array"},
		{"string for tensor", f, `{"input": "abc"}`, "Invalid input type for 'input': expected array"},
		{"null for tensor", f, `{"input": null}`, "Invalid input type for 'input': expected array"},
		{"bool for tensor", f, `{"input": true}`, "Invalid input type for 'input': expected array"},
		{"number for rank 2", f, `{"input": 1}`, "Invalid input type for 'input': expected array"},
		{"number for [3]", []Spec{spec("v", Float32, 3)}, `{"v": 1}`, "Invalid input type for 'v': expected array"},
		{"string for [-1] float", []Spec{spec("v", Float32, -1)}, `{"v": "1"}`, "Invalid input type for 'v': expected array"},
		{"number for [-1] string", []Spec{spec("v", String, -1)}, `{"v": 1}`, "Invalid input type for 'v': expected array"},
		{"object for unknown rank", []Spec{{Name: "v", DType: Float32}}, `{"v": {}}`, "Invalid input type for 'v': expected array"},
		{"array for rank 0", []Spec{spec("v", Float32)}, `{"v": [1]}`, "Invalid input type for 'v': expected number"},
		{"string for rank 0", []Spec{spec("v", Int64)}, `{"v": "1"}`, "Invalid input type for 'v': expected number"},
		{"null for rank 0", []Spec{spec("v", Float64)}, `{"v": null}`, "Invalid input type for 'v': expected number"},
		{"bool for rank 0 number", []Spec{spec("v", Float64)}, `{"v": true}`, "Invalid input type for 'v': expected number"},
		{"number for rank 0 bool", []Spec{spec("v", Bool)}, `{"v": 1}`, "Invalid input type for 'v': expected boolean"},
		{"array for rank 0 bool", []Spec{spec("v", Bool)}, `{"v": [true]}`, "Invalid input type for 'v': expected boolean"},
		{"number for rank 0 string", []Spec{spec("v", String)}, `{"v": 1}`, "Invalid input type for 'v': expected string"},
		{"object for rank 0 string", []Spec{spec("v", String)}, `{"v": {}}`, "Invalid input type for 'v': expected string"},

		// Shapes.
		{"ragged", f, `{"input": [[1,2,3,4],[1,2,3]]}`, "Invalid input for 'input': ragged array: element [1] has 3 items, expected 4"},
		{"ragged longer", f, `{"input": [[1,2,3,4],[1,2,3,4,5]]}`, "Invalid input for 'input': ragged array: element [1] has 5 items, expected 4"},
		{"ragged deep", []Spec{spec("x", Float32, -1, -1, -1)}, `{"x": [[[1,2],[3,4]],[[5,6],[7]]]}`, "Invalid input for 'x': ragged array: element [1, 1] has 1 items, expected 2"},
		{"ragged middle", []Spec{spec("x", Float32, -1, -1, -1)}, `{"x": [[[1,2],[3,4]],[[5,6]]]}`, "Invalid input for 'x': ragged array: element [1] has 1 items, expected 2"},
		{"ragged empty", []Spec{spec("x", Float32, -1, -1)}, `{"x": [[1],[]]}`, "Invalid input for 'x': ragged array: element [1] has 0 items, expected 1"},
		{"ragged after empty", []Spec{spec("x", Float32, -1, -1)}, `{"x": [[],[1]]}`, "Invalid input for 'x': ragged array: element [1] has 1 items, expected 0"},
		{"number where array", []Spec{spec("x", Float32, -1, -1, -1)}, `{"x": [[[1],[2]],[[1],3]]}`, "Invalid input for 'x': expected an array at [1, 1], got a number"},
		{"number where array 2", f, `{"input": [[1,2,3,4],5]}`, "Invalid input for 'input': expected an array at [1], got a number"},
		{"null where array", f, `{"input": [[1,2,3,4],null]}`, "Invalid input for 'input': expected an array at [1], got null"},
		{"string where array", f, `{"input": [[1,2,3,4],"x"]}`, "Invalid input for 'input': expected an array at [1], got a string"},
		{"array where number", f, `{"input": [[1,2,3,[4]]]}`, "Invalid input for 'input': expected a number at [0, 3], got an array"},
		{"array where number first", f, `{"input": [[1,[2]]]}`, "Invalid input for 'input': expected a number at [0, 1], got an array"},
		{"array where bool", []Spec{spec("x", Bool, -1, -1)}, `{"x": [[true],[[false]]]}`, "Invalid input for 'x': expected a boolean at [1, 0], got an array"},
		{"array where string", []Spec{spec("x", String, -1)}, `{"x": ["a", ["b"]]}`, "Invalid input for 'x': expected a string at [1], got an array"},
		{"rank too high", f, `{"input": [[[1,2,3,4],[1,2,3,4]]]}`, "Invalid shape for 'input': expected rank 2 [-1, 4], got rank 3 [1, 2, 4]"},
		{"rank too low", img, `{"x": [[1,2],[3,4]]}`, "Invalid shape for 'x': expected rank 4 [-1, 3, 224, 224], got rank 2 [2, 2]"},
		{"empty batch fixed", []Spec{spec("x", Float32, 2, 3)}, `{"x": []}`, "Invalid shape for 'x': expected [2, 3], got [0, 3]"},
		{"empty too deep", []Spec{spec("x", Float32, -1)}, `{"x": [[]]}`, "Invalid shape for 'x': expected rank 1 [-1], got rank 2 [1, 0]"},
		{"dim mismatch", f, `{"input": [[1,2,3]]}`, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"dim mismatch batched", f, `{"input": [1,2,3]}`, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"batch fixed 2", []Spec{spec("x", Float32, 2, 2)}, `{"x": [1, 2]}`, "Invalid shape for 'x': expected rank 2 [2, 2], got rank 1 [2]"},
		{"image dims", img, `{"x": [[[[1]],[[2]],[[3]]]]}`, "Invalid shape for 'x': expected [-1, 3, 224, 224], got [1, 3, 1, 1]"},
		{"fixed rank 1", []Spec{spec("x", Int64, 3)}, `{"x": [1, 2]}`, "Invalid shape for 'x': expected [3], got [2]"},

		// Elements.
		{"fraction for int", []Spec{spec("x", Int64, -1, -1)}, `{"x": [[1, 2, 1.5]]}`, "Invalid value for 'x' at [0, 2]: 1.5 is not an integer (int64)"},
		{"tiny fraction for int", []Spec{spec("x", Int32, -1)}, `{"x": [1e-400]}`, "Invalid value for 'x' at [0]: 1e-400 is not an integer (int32)"},
		{"negative fraction for uint", []Spec{spec("x", Uint8, -1)}, `{"x": [-0.5]}`, "Invalid value for 'x' at [0]: -0.5 is not an integer (uint8)"},
		{"uint8 300", []Spec{spec("x", Uint8, -1)}, `{"x": [1, 2, 3, 300]}`, "Invalid value for 'x' at [3]: 300 is out of range for uint8"},
		{"uint32 -1", []Spec{spec("x", Uint32, -1)}, `{"x": [-1]}`, "Invalid value for 'x' at [0]: -1 is out of range for uint32"},
		{"int64 1e20", []Spec{spec("x", Int64, -1)}, `{"x": [1e20]}`, "Invalid value for 'x' at [0]: 1e20 is out of range for int64"},
		{"int64 max+1", []Spec{spec("x", Int64, -1)}, `{"x": [9223372036854775808]}`, "Invalid value for 'x' at [0]: 9223372036854775808 is out of range for int64"},
		{"int64 min-1", []Spec{spec("x", Int64, -1)}, `{"x": [-9223372036854775809]}`, "Invalid value for 'x' at [0]: -9223372036854775809 is out of range for int64"},
		{"uint64 max+1", []Spec{spec("x", Uint64, -1)}, `{"x": [18446744073709551616]}`, "Invalid value for 'x' at [0]: 18446744073709551616 is out of range for uint64"},
		{"int8 128", []Spec{spec("x", Int8, -1)}, `{"x": [128]}`, "Invalid value for 'x' at [0]: 128 is out of range for int8"},
		{"int8 -129", []Spec{spec("x", Int8, -1)}, `{"x": [-129]}`, "Invalid value for 'x' at [0]: -129 is out of range for int8"},
		{"int16 big exp", []Spec{spec("x", Int16, -1)}, `{"x": [1e99999999999]}`, "Invalid value for 'x' at [0]: 1e99999999999 is out of range for int16"},
		{"uint16 65536", []Spec{spec("x", Uint16, -1)}, `{"x": [65536]}`, "Invalid value for 'x' at [0]: 65536 is out of range for uint16"},
		{"int rank 0", []Spec{spec("x", Int32)}, `{"x": 2.5}`, "Invalid value for 'x': 2.5 is not an integer (int32)"},
		{"int bare [-1]", []Spec{spec("x", Uint8, -1)}, `{"x": 256}`, "Invalid value for 'x': 256 is out of range for uint8"},
		{"float32 1e39", []Spec{spec("x", Float32, -1)}, `{"x": [1e39]}`, "Invalid value for 'x' at [0]: 1e39 is out of range for float32"},
		{"float32 -3.5e38", []Spec{spec("x", Float32, -1)}, `{"x": [-3.5e38]}`, "Invalid value for 'x' at [0]: -3.5e38 is out of range for float32"},
		{"float64 1e309", []Spec{spec("x", Float64, -1)}, `{"x": [1e309]}`, "Invalid value for 'x' at [0]: 1e309 is out of range for float64"},
		{"float16 65520", []Spec{spec("x", Float16, -1)}, `{"x": [65519, 65520]}`, "Invalid value for 'x' at [1]: 65520 is out of range for float16"},
		{"float16 -1e5", []Spec{spec("x", Float16, -1)}, `{"x": [-1e5]}`, "Invalid value for 'x' at [0]: -1e5 is out of range for float16"},
		{"bfloat16 1e39", []Spec{spec("x", BFloat16, -1)}, `{"x": [1e39]}`, "Invalid value for 'x' at [0]: 1e39 is out of range for bfloat16"},
		{"long literal clipped", []Spec{spec("x", Uint8, -1)}, `{"x": [` + strings.Repeat("9", 300) + `]}`, "Invalid value for 'x' at [0]: " + strings.Repeat("9", 40) + "... is out of range for uint8"},
		{"number for bool", []Spec{spec("x", Bool, -1)}, `{"x": [true, 1]}`, "Invalid value for 'x' at [1]: expected a boolean, got a number"},
		{"string for bool", []Spec{spec("x", Bool, -1)}, `{"x": ["true"]}`, "Invalid value for 'x' at [0]: expected a boolean, got a string"},
		{"null for bool", []Spec{spec("x", Bool, -1)}, `{"x": [null]}`, "Invalid value for 'x' at [0]: expected a boolean, got null"},
		{"number for string", []Spec{spec("x", String, -1)}, `{"x": ["a", 2]}`, "Invalid value for 'x' at [1]: expected a string, got a number"},
		{"bool for string", []Spec{spec("x", String, -1)}, `{"x": [false]}`, "Invalid value for 'x' at [0]: expected a string, got a boolean"},
		{"null in floats", []Spec{spec("x", Float32, -1)}, `{"x": [1, 2, null]}`, "Invalid value for 'x' at [2]: expected a number, got null"},
		{"null deep", f, `{"input": [[1, 2, 3, 4], [1, null, 3, 4]]}`, "Invalid value for 'input' at [1, 1]: expected a number, got null"},
		{"null first", f, `{"input": [[null]]}`, "Invalid value for 'input' at [0, 0]: expected a number, got null"},
		{"string in floats", []Spec{spec("x", Float64, -1)}, `{"x": ["1.5"]}`, "Invalid value for 'x' at [0]: expected a number, got a string"},
		{"bool in ints", []Spec{spec("x", Int64, -1)}, `{"x": [true]}`, "Invalid value for 'x' at [0]: expected a number, got a boolean"},
		{"object in floats", []Spec{spec("x", Float32, -1)}, `{"x": [{}]}`, "Invalid value for 'x' at [0]: expected a number, got an object"},
		{"first problem wins", f, `{"input": [[1, 2, null, "x"]]}`, "Invalid value for 'input' at [0, 2]: expected a number, got null"},
		{"error in second input", two, `{"a": [1], "b": [1.5]}`, "Invalid value for 'b' at [0]: 1.5 is not an integer (int64)"},
	}
	runErrCases(t, cases)
}

func runErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := DecodeRequest([]byte(c.body), c.specs)
			if err == nil {
				t.Fatalf("no error; got %v", out)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if e.Message != c.msg || err.Error() != c.msg {
				t.Errorf("message\n got: %s\nwant: %s", e.Message, c.msg)
			}
			if out != nil {
				t.Errorf("tensors returned with an error")
			}
		})
	}
}

func TestErrorInput(t *testing.T) {
	specs := []Spec{spec("a", Float32, -1)}
	for body, input := range map[string]string{
		`{"a": [null]}`: "a",
		`{"b": 1}`:      "b",
		`{}`:            "a",
		`[1]`:           "",
		`{`:             "",
	} {
		_, err := DecodeRequest([]byte(body), specs)
		var e *Error
		if !errors.As(err, &e) || e.Input != input {
			t.Errorf("%s: got %#v, want Input %q", body, err, input)
		}
	}
}

func TestDecodeInvalidSpec(t *testing.T) {
	_, err := DecodeRequest([]byte(`{}`), []Spec{{Name: "x", DType: Invalid}})
	var e *Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("invalid dtype: got %v, want a non-client error", err)
	}
}

func TestDecodeNesting(t *testing.T) {
	s := []Spec{{Name: "x", DType: Float32}}
	// 63 arrays inside the object: 64 levels, accepted.
	body := `{"x": ` + strings.Repeat("[", 63) + "1" + strings.Repeat("]", 63) + `}`
	out, err := DecodeRequest([]byte(body), s)
	if err != nil {
		t.Fatalf("64 levels: %v", err)
	}
	if len(out[0].Shape) != 63 || out[0].Len() != 1 {
		t.Errorf("shape %v", out[0].Shape)
	}
	// 65 levels: rejected.
	body = `{"x": ` + strings.Repeat("[", 64) + "1" + strings.Repeat("]", 64) + `}`
	runErrCases(t, []errCase{
		{"65 levels", s, body, "Invalid JSON body: nesting depth exceeds 64 at offset 69"},
		{"very deep", s, `{"x": ` + strings.Repeat("[", 1000000), "Invalid JSON body: nesting depth exceeds 64 at offset 69"},
		{"deep non-object", s, strings.Repeat("[", 100000), "Invalid JSON body: nesting depth exceeds 64 at offset 64"},
		{"deep mixed non-object", s, strings.Repeat(`[{"a":`, 100000), "Invalid JSON body: nesting depth exceeds 64 at offset 192"},
		{"deep object value", s, `{"x": {"x": {"x": 1}}}`, "Invalid input type for 'x': expected array"},
	})
}

func TestDecodeStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`""`, ""},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u0041\u00e9\u4e2d"`, "Aé中"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00x"`, "😀x"},
		{`"a\ud800b"`, "a\uFFFDb"},          // lone high surrogate
		{`"\udc00"`, "\uFFFD"},              // lone low surrogate
		{`"\ud800\u0041"`, "\uFFFDA"},       // high surrogate, then a normal escape
		{`"\ud800\ud800\udc00"`, "\uFFFD𐀀"}, // lone, then a pair
		{"\"héllo 中文 😀\"", "héllo 中文 😀"},
		{"\"bad \xff utf8\"", "bad \uFFFD utf8"},
		{"\"trunc \xe4\xb8\"", "trunc \uFFFD\uFFFD"},
		{"\"\u2028\"", "\u2028"},
		{`"\u0000"`, "\x00"},
		{"\"\x7f\"", "\x7f"},
	}
	for _, c := range cases {
		got := decodeOne(t, spec("s", String), `{"s": `+c.in+`}`)
		if s := got.Data.([]string)[0]; s != c.want {
			t.Errorf("%s: got %q, want %q", c.in, s, c.want)
		}
	}
	// Many strings, escaped and not, in one tensor.
	var sb strings.Builder
	var want []string
	sb.WriteString(`{"s": [`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		w := strings.Repeat("x", i%7) + strconv.Itoa(i)
		if i%3 == 0 {
			w += "\n"
			sb.WriteString(strconv.Quote(w))
		} else {
			sb.WriteString(`"` + w + `"`)
		}
		want = append(want, w)
	}
	sb.WriteString("]}")
	got := decodeOne(t, spec("s", String, -1), sb.String())
	if !reflect.DeepEqual(got.Data, want) {
		t.Errorf("strings: got %q", got.Data)
	}
}

// TestDecodeDoesNotAliasBody checks that results survive reuse of the body.
func TestDecodeDoesNotAliasBody(t *testing.T) {
	body := []byte(`{"s": ["abc", "d\u00e9f"], "f": [1.5]}`)
	out, err := DecodeRequest(body, []Spec{spec("s", String, -1), spec("f", Float32, -1)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'Z'
	}
	if !reflect.DeepEqual(out[0].Data, []string{"abc", "déf"}) || !reflect.DeepEqual(out[1].Data, []float32{1.5}) {
		t.Errorf("results changed with the body: %v %v", out[0].Data, out[1].Data)
	}
}

func TestDecodeBigInts(t *testing.T) {
	cases := []struct {
		d    DType
		in   string
		want any
	}{
		{Int64, "9007199254740993", int64(9007199254740993)},
		{Int64, "-9007199254740993", int64(-9007199254740993)},
		{Int64, "9223372036854775807", int64(math.MaxInt64)},
		{Int64, "-9223372036854775808", int64(math.MinInt64)},
		{Int64, "9223372036854775807.0", int64(math.MaxInt64)},
		{Int64, "922337203685477580.7e1", int64(math.MaxInt64)},
		{Int64, "0.9223372036854775807e19", int64(math.MaxInt64)},
		{Int64, "1234567890123456789", int64(1234567890123456789)},
		{Int64, "1e18", int64(1e18)},
		{Int64, "100000000000000000000e-2", int64(1e18)},
		{Int64, "-0", int64(0)},
		{Int64, "0e999999999", int64(0)},
		{Int64, "0.000", int64(0)},
		{Uint64, "18446744073709551615", uint64(math.MaxUint64)},
		{Uint64, "12345678901234567890", uint64(12345678901234567890)},
		{Uint64, "1844674407370955161.5e1", uint64(math.MaxUint64)},
		{Int32, "2147483647", int32(math.MaxInt32)},
		{Int32, "1E3", int32(1000)},
		{Uint32, "4.294967295e9", uint32(math.MaxUint32)},
	}
	for _, c := range cases {
		got := decodeOne(t, spec("x", c.d), `{"x": `+c.in+`}`)
		if v := reflect.ValueOf(got.Data).Index(0).Interface(); v != c.want {
			t.Errorf("%v %s: got %v, want %v", c.d, c.in, v, c.want)
		}
	}
	// Random int64/uint64 values, printed plainly and with exponents.
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		v := int64(r.Uint64()) >> r.IntN(64)
		u := r.Uint64() >> r.IntN(64)
		forms := []string{strconv.FormatInt(v, 10), strconv.FormatInt(v, 10) + "e0", strconv.FormatInt(v, 10) + ".000"}
		if v != 0 {
			forms = append(forms, strconv.FormatInt(v, 10)+"0e-1")
		}
		for _, s := range forms {
			got := decodeOne(t, spec("x", Int64), `{"x": `+s+`}`)
			if g := got.Data.([]int64)[0]; g != v {
				t.Fatalf("int64 %s: got %d", s, g)
			}
		}
		s := strconv.FormatUint(u, 10)
		if got := decodeOne(t, spec("x", Uint64), `{"x": `+s+`}`); got.Data.([]uint64)[0] != u {
			t.Fatalf("uint64 %s: got %d", s, got.Data.([]uint64)[0])
		}
	}
}

// intReference decides exactly, with math/big, what a JSON number means
// for an integer type: the value, or "notint" / "range".
func intReference(s string, d DType) (any, string) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad literal " + s)
	}
	if !r.IsInt() {
		return nil, "notint"
	}
	n := r.Num()
	pos, neg := intLimits(d)
	if n.Sign() < 0 {
		if new(big.Int).Neg(n).Cmp(new(big.Int).SetUint64(neg)) > 0 {
			return nil, "range"
		}
	} else if n.Cmp(new(big.Int).SetUint64(pos)) > 0 {
		return nil, "range"
	}
	var v any
	switch d {
	case Int8:
		v = int8(n.Int64())
	case Int16:
		v = int16(n.Int64())
	case Int32:
		v = int32(n.Int64())
	case Int64:
		v = n.Int64()
	case Uint8:
		v = uint8(n.Uint64())
	case Uint16:
		v = uint16(n.Uint64())
	case Uint32:
		v = uint32(n.Uint64())
	case Uint64:
		v = n.Uint64()
	}
	return v, ""
}

// checkIntLiteral compares decoding the literal s as type d with intReference.
func checkIntLiteral(t *testing.T, s string, d DType) {
	t.Helper()
	want, wantErr := intReference(s, d)
	out, err := DecodeRequest([]byte(`{"x": [`+s+`]}`), []Spec{spec("x", d, -1)})
	switch wantErr {
	case "":
		if err != nil {
			t.Fatalf("%v %s: %v, want %v", d, s, err, want)
		}
		if got := reflect.ValueOf(out[0].Data).Index(0).Interface(); got != want {
			t.Fatalf("%v %s: got %v, want %v", d, s, got, want)
		}
	case "notint":
		if err == nil || !strings.Contains(err.Error(), "is not an integer ("+d.String()+")") {
			t.Fatalf("%v %s: got %v, want not an integer", d, s, err)
		}
	case "range":
		if err == nil || !strings.Contains(err.Error(), "is out of range for "+d.String()) {
			t.Fatalf("%v %s: got %v, want out of range", d, s, err)
		}
	}
}

func TestDecodeIntsAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	types := []DType{Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64}
	for i := 0; i < iterations(30000); i++ {
		s := randomNumberLiteral(r)
		checkIntLiteral(t, s, types[i%len(types)])
	}
}

// randomNumberLiteral makes valid JSON number literals of many forms.
func randomNumberLiteral(r *rand.Rand) string {
	var b []byte
	if r.IntN(3) == 0 {
		b = append(b, '-')
	}
	nd := 1 + r.IntN(25)
	if r.IntN(4) == 0 {
		b = append(b, '0')
	} else {
		b = append(b, byte('1'+r.IntN(9)))
		for i := 1; i < nd; i++ {
			if r.IntN(3) == 0 {
				b = append(b, '0')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
	}
	if r.IntN(2) == 0 {
		b = append(b, '.')
		for i := 0; i < 1+r.IntN(20); i++ {
			if r.IntN(2) == 0 {
				b = append(b, '0')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
	}
	if r.IntN(2) == 0 {
		b = append(b, "eE"[r.IntN(2)])
		switch r.IntN(3) {
		case 0:
			b = append(b, '-')
		case 1:
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(r.IntN(30)), 10)
	}
	return string(b)
}

// checkFloatLiteral compares decoding the literal s as float32 and float64
// with strconv.ParseFloat, bit for bit (out of range iff ParseFloat
// overflows). Each type is decoded both through the general element parser
// (first innermost array, or a bare value) and through the fast loops used
// for the following innermost arrays.
func checkFloatLiteral(t *testing.T, s string) {
	t.Helper()
	want32, err32 := strconv.ParseFloat(s, 32)
	want64, err64 := strconv.ParseFloat(s, 64)
	for _, c := range []struct {
		d    DType
		body string
		rank int
	}{
		{Float32, `[` + s + `]`, 1}, {Float32, `[0, ` + s + `]`, 1}, {Float32, `[[0], [` + s + `]]`, 2}, {Float32, s, 0},
		{Float64, `[` + s + `]`, 1}, {Float64, `[0,` + s + `]`, 1}, {Float64, `[[0], [` + s + `]]`, 2}, {Float64, s, 0},
	} {
		var sp Spec
		switch c.rank {
		case 0:
			sp = spec("x", c.d)
		case 1:
			sp = spec("x", c.d, -1)
		default:
			sp = spec("x", c.d, -1, 1)
		}
		out, err := DecodeRequest([]byte(`{"x": `+c.body+`}`), []Spec{sp})
		if (c.d == Float32 && err32 != nil) || (c.d == Float64 && err64 != nil) {
			if err == nil || !strings.Contains(err.Error(), "is out of range for "+c.d.String()) {
				t.Fatalf("%v %s: got %v, want out of range", c.d, c.body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v %s: %v", c.d, c.body, err)
		}
		switch data := out[0].Data.(type) {
		case []float32:
			if got := data[len(data)-1]; math.Float32bits(got) != math.Float32bits(float32(want32)) {
				t.Fatalf("%v %s: got %v (%08x), want %v (%08x)", c.d, c.body, got, math.Float32bits(got), float32(want32), math.Float32bits(float32(want32)))
			}
		case []float64:
			if got := data[len(data)-1]; math.Float64bits(got) != math.Float64bits(want64) {
				t.Fatalf("%v %s: got %v, want %v", c.d, c.body, got, want64)
			}
		}
	}
}

func TestParseFloatBitIdentical(t *testing.T) {
	fixed := []string{
		"0", "-0", "0.0", "-0.0", "0e5", "1", "-1", "0.1", "0.2", "0.3", "1e23", "8.589973e9",
		"3.4028234663852886e38", "3.4028235e38", "3.4028235677973366e38", "3.40282357e38", "-3.4028235e38",
		"1.401298464324817e-45", "7e-46", "7.1e-46", "1e-46", "1.17549435e-38", "1.1754942e-38",
		"1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315807e308", "4.9e-324", "2.4e-324", "2.5e-324",
		"2.2250738585072011e-308", "2.2250738585072012e-308",
		"9007199254740993", "9007199254740992.5", "123456789012345678901234567890",
		"0.000000000000000000000000000001", "1e-22", "1e22", "1e-23", "4.5035996273704955e15",
		"16777217", "16777216.000000000001", "33554435", "0.12345678", "0.99999999", "1.00000005960464477539",
		"1.0000000596046448", "1.00000006", "1.000000059604644775390625", "1.000000059604644775390624",
		"1.000000059604644775390626", "5e-324", "1e400", "-1e400", "1e-400", "123456789e-30",
		"1.5e-45", "0.00000000000000000000000000000000000000000000070064923216240861318958", // float32 tie
		"1.00000000000000000000000000000000000000000000000000000000001",
		"100000000000000000000000000000000000000000000000000000000000000000000001e-70",
		strings.Repeat("1", 800), "0." + strings.Repeat("0", 400) + "1e400",
	}
	for _, s := range fixed {
		checkFloatLiteral(t, s)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < iterations(200000); i++ {
		var s string
		switch i % 6 {
		case 0: // float32 values as clients print them
			s = strconv.FormatFloat(float64(math.Float32frombits(r.Uint32())), 'g', -1, 32)
		case 1: // float64 values, shortest
			s = strconv.FormatFloat(math.Float64frombits(r.Uint64()), 'g', -1, 64)
		case 2: // float32 values printed at float64 precision (numpy tolist)
			s = strconv.FormatFloat(float64(r.Float32()), 'g', -1, 64)
		case 3: // exact halfway points between float32 neighbours, and next to them
			f := math.Float32frombits(r.Uint32() & 0x7f7fffff)
			next := math.Nextafter32(f, float32(math.Inf(1)))
			mid := (float64(f) + float64(next)) / 2
			s = strconv.FormatFloat(mid, 'e', -1, 64) // shortest: may be on either side
			checkFloatLiteral(t, new(big.Float).SetFloat64(mid).Text('e', 60))
			// 17 to 19 digit decimals a hair off the midpoint (on either
			// side): within the fast path, but closer to the midpoint than
			// float64 can resolve.
			for _, nd := range []int{16, 17, 18} {
				checkFloatLiteral(t, new(big.Float).SetFloat64(mid).Text('e', nd))
			}
			checkFloatLiteral(t, strings.Replace(new(big.Float).SetFloat64(mid).Text('e', 80), "e", "1e", 1))
		case 4:
			s = randomNumberLiteral(r)
		case 5: // short decimals with few digits
			s = strconv.Itoa(r.IntN(2000000)-1000000) + "e" + strconv.Itoa(r.IntN(90)-45)
		}
		if s == "NaN" || strings.Contains(s, "Inf") {
			continue
		}
		checkFloatLiteral(t, s)
	}
}

// halfReference rounds the decimal s to the small float format exactly (ties
// to even), by comparing the candidates around float64 parse with big.Rat.
func halfReference(s string, toFloat64 func(uint16) float64, fromFloat64 func(float64) uint16, maxFinite uint16) (uint16, bool) {
	r, _ := new(big.Rat).SetString(s)
	neg := r.Sign() < 0
	r.Abs(r)
	f, _ := strconv.ParseFloat(s, 64)
	h := fromFloat64(math.Abs(f)) & 0x7fff
	best := uint16(0)
	var bestDist *big.Rat
	for _, c := range []int{int(h) - 1, int(h), int(h) + 1} {
		if c < 0 || c > int(maxFinite)+1 {
			continue
		}
		cv := new(big.Rat)
		if c == int(maxFinite)+1 {
			// The first value past the largest finite one, as if the
			// exponent range went on: rounding there means overflow.
			last := toFloat64(maxFinite)
			prev := toFloat64(maxFinite - 1)
			cv.SetFloat64(last + (last - prev))
		} else {
			cv.SetFloat64(toFloat64(uint16(c)))
		}
		d := new(big.Rat).Sub(r, cv)
		d.Abs(d)
		if bestDist == nil || d.Cmp(bestDist) < 0 || (d.Cmp(bestDist) == 0 && c%2 == 0) {
			best, bestDist = uint16(c), d
		}
	}
	if best > maxFinite {
		return 0, false
	}
	if neg {
		best |= 0x8000
	}
	return best, true
}

func TestDecodeHalfAgainstBig(t *testing.T) {
	f16 := func(h uint16) float64 { return float64(Float16ToFloat32(h)) }
	bf16 := func(h uint16) float64 { return float64(BFloat16ToFloat32(h)) }
	r := rand.New(rand.NewPCG(9, 10))
	var lits []string
	// Exact midpoints between neighbours and decimals just off them, for
	// every positive finite value: the cases double rounding gets wrong.
	for h := uint16(0); h < 0x7bff; h += 1 + uint16(r.IntN(7)) {
		mid := (f16(h) + f16(h+1)) / 2
		e := new(big.Float).SetFloat64(mid).Text('e', 40)
		lits = append(lits, e, strings.Replace(e, "e", "000000000000000000001e", 1), strconv.FormatFloat(mid, 'g', -1, 64))
		if h > 0 {
			lits = append(lits, strconv.FormatFloat(math.Nextafter(mid, 0), 'g', -1, 64))
		}
	}
	for h := uint16(0); h < 0x7f7f; h += 1 + uint16(r.IntN(13)) {
		mid := (bf16(h) + bf16(h+1)) / 2
		e := new(big.Float).SetFloat64(mid).Text('e', 60)
		lits = append(lits, e, strings.Replace(e, "e", "0000000000000000000000000000001e", 1), strconv.FormatFloat(mid, 'g', -1, 64))
	}
	for i := 0; i < iterations(20000); i++ {
		lits = append(lits, randomNumberLiteral(r), strconv.FormatFloat(r.NormFloat64()*1000, 'g', -1, 64),
			strconv.FormatFloat(float64(r.Float32()), 'g', -1, 32))
	}
	lits = append(lits, "65504", "65519.99999999999999999", "65520", "65520.0000000000000000001", "-65520", "1e-8", "2.98023223876953125e-8",
		"2.98023223876953125000000001e-8", "2.98023223876953124999999999e-8", "3.3895313892515355e38", "3.3961775292304957e38", "3.3961775292304958e38")
	for _, s := range lits {
		for _, c := range []struct {
			d    DType
			to   func(uint16) float64
			from func(float64) uint16
			max  uint16
		}{{Float16, f16, Float64ToFloat16, 0x7bff}, {BFloat16, bf16, Float64ToBFloat16, 0x7f7f}} {
			want, ok := halfReference(s, c.to, c.from, c.max)
			out, err := DecodeRequest([]byte(`{"x": [`+s+`]}`), []Spec{spec("x", c.d, -1)})
			if !ok {
				if err == nil || !strings.Contains(err.Error(), "out of range for "+c.d.String()) {
					t.Fatalf("%v %s: got %v, want out of range", c.d, s, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v %s: %v", c.d, s, err)
			}
			if got := out[0].Data.([]uint16)[0]; got != want && !(got&0x7fff == 0 && want&0x7fff == 0) {
				t.Fatalf("%v %s: got %04x, want %04x", c.d, s, got, want)
			}
		}
	}
}

func TestDecodeLargeImage(t *testing.T) {
	body := imageBody(2)
	out, err := DecodeRequest(body, imageSpecs)
	if err != nil {
		t.Fatal(err)
	}
	got := out[0]
	if !reflect.DeepEqual(got.Shape, []int64{1, 3, 224, 224}) || got.Len() != 3*224*224 {
		t.Fatalf("shape %v len %d", got.Shape, got.Len())
	}
	// Compare with a plain strconv parse of every number.
	fields := strings.FieldsFunc(string(body[len(`{"input": `):]), func(r rune) bool {
		return r == '[' || r == ']' || r == ',' || r == ' ' || r == '}'
	})
	data := got.Data.([]float32)
	for i, f := range fields {
		want, _ := strconv.ParseFloat(f, 32)
		if math.Float32bits(data[i]) != math.Float32bits(float32(want)) {
			t.Fatalf("element %d %s: got %v", i, f, data[i])
		}
	}
}

func TestDecodeConcurrent(t *testing.T) {
	bodies := []string{
		`{"x": [[1, 2], [3, 4]], "s": ["a", "b\n"]}`,
		`{"x": [[1.5, 2.5]]}`,
		`{"x": [[1, 2], [3]]}`,
		`{"s": ["only"], "x": [5, 6]}`,
	}
	specs := []Spec{spec("x", Float64, -1, 2), {Name: "s", DType: String, Shape: []int64{-1}}}
	want := make([]string, len(bodies))
	for i, b := range bodies {
		out, err := DecodeRequest([]byte(b), specs)
		want[i] = fmt.Sprint(err, tensorsString(out))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				k := (g + i) % len(bodies)
				out, err := DecodeRequest([]byte(bodies[k]), specs)
				if got := fmt.Sprint(err, tensorsString(out)); got != want[k] {
					t.Errorf("body %d: got %s, want %s", k, got, want[k])
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func tensorsString(ts []*Tensor) string {
	var sb strings.Builder
	for _, t := range ts {
		if t == nil {
			sb.WriteString("<nil> ")
			continue
		}
		fmt.Fprintf(&sb, "%v%v%v ", t.DType, t.Shape, t.Data)
	}
	return sb.String()
}
