package rest

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

func spec(name string, d tensor.DType, shape ...int64) tensor.Spec {
	if shape == nil {
		shape = []int64{}
	}
	return tensor.Spec{Name: name, DType: d, Shape: shape, Required: true}
}

// decodeOne decodes body with one spec and returns its tensor.
func decodeOne(t *testing.T, s tensor.Spec, body string) *tensor.Tensor {
	t.Helper()
	out, err := DecodeRequest([]byte(body), []tensor.Spec{s})
	if err != nil {
		t.Fatalf("DecodeRequest(%s): %v", body, err)
	}
	return out[0]
}

func TestDecodeEveryDType(t *testing.T) {
	cases := []struct {
		d     tensor.DType
		value string
		shape []int64
		data  any
	}{
		{tensor.Float32, `[1.5, -2, 0, 3e2, 1E-1]`, []int64{5}, []float32{1.5, -2, 0, 300, 0.1}},
		{tensor.Float64, `[1.5, -2, 0.1, 1e308]`, []int64{4}, []float64{1.5, -2, 0.1, 1e308}},
		{tensor.Float16, `[1, -2.5, 65504, 0.0001, 6e-8]`, []int64{5}, []uint16{0x3c00, 0xc100, 0x7bff, 0x068e, 0x0001}},
		{tensor.BFloat16, `[1, -2.5, 3.0e38, 1e-40]`, []int64{4}, []uint16{0x3f80, 0xc020, 0x7f62, 0x0001}},
		{tensor.Int8, `[-128, 127, 0, 1e2]`, []int64{4}, []int8{-128, 127, 0, 100}},
		{tensor.Int16, `[-32768, 32767, 2.0]`, []int64{3}, []int16{-32768, 32767, 2}},
		{tensor.Int32, `[-2147483648, 2147483647]`, []int64{2}, []int32{math.MinInt32, math.MaxInt32}},
		{tensor.Int64, `[-9223372036854775808, 9223372036854775807, 9007199254740993]`, []int64{3}, []int64{math.MinInt64, math.MaxInt64, 9007199254740993}},
		{tensor.Uint8, `[0, 255, -0]`, []int64{3}, []uint8{0, 255, 0}},
		{tensor.Uint16, `[65535, 1]`, []int64{2}, []uint16{65535, 1}},
		{tensor.Uint32, `[4294967295]`, []int64{1}, []uint32{math.MaxUint32}},
		{tensor.Uint64, `[18446744073709551615, 18446744073709551614, 1.8446744073709551615e19]`, []int64{3}, []uint64{math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64}},
		{tensor.Bool, `[true, false]`, []int64{2}, []bool{true, false}},
		{tensor.String, `["a", "", "\u00e9\n"]`, []int64{3}, []string{"a", "", "é\n"}},
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
		spec  tensor.Spec
		value string
		shape []int64
		data  any
	}{
		{"exact", spec("x", tensor.Float32, 2, 2), `[[1,2],[3,4]]`, []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"dynamic", spec("x", tensor.Float32, -1, -1), `[[1,2,3]]`, []int64{1, 3}, []float32{1, 2, 3}},
		{"batch rule dynamic", spec("x", tensor.Float32, -1, 4), `[1,2,3,4]`, []int64{1, 4}, []float32{1, 2, 3, 4}},
		{"batch rule fixed 1", spec("x", tensor.Float32, 1, 2, 2), `[[1,2],[3,4]]`, []int64{1, 2, 2}, []float32{1, 2, 3, 4}},
		{"batch of two", spec("x", tensor.Float32, -1, 2), `[[1,2],[3,4]]`, []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"bare number [-1]", spec("x", tensor.Float32, -1), `7`, []int64{1}, []float32{7}},
		{"bare number [1]", spec("x", tensor.Int64, 1), `7`, []int64{1}, []int64{7}},
		{"bare bool [-1]", spec("x", tensor.Bool, -1), `true`, []int64{1}, []bool{true}},
		{"bare string [1]", spec("x", tensor.String, 1), `"hi"`, []int64{1}, []string{"hi"}},
		{"rank 0 number", spec("x", tensor.Float64), `2.5`, []int64{}, []float64{2.5}},
		{"rank 0 bool", spec("x", tensor.Bool), `false`, []int64{}, []bool{false}},
		{"rank 0 string", spec("x", tensor.String), `"s"`, []int64{}, []string{"s"}},
		{"rank 0 int", spec("x", tensor.Int32), `-3`, []int64{}, []int32{-3}},
		{"unknown rank scalar", tensor.Spec{Name: "x", DType: tensor.Float32}, `1`, []int64{}, []float32{1}},
		{"unknown rank 3", tensor.Spec{Name: "x", DType: tensor.Float32}, `[[[1],[2]]]`, []int64{1, 2, 1}, []float32{1, 2}},
		{"unknown rank empty", tensor.Spec{Name: "x", DType: tensor.Int8}, `[]`, []int64{0}, []int8{}},
		{"empty rank 1", spec("x", tensor.Float32, -1), `[]`, []int64{0}, []float32{}},
		{"empty inner", spec("x", tensor.Float32, -1, 0), `[[],[]]`, []int64{2, 0}, []float32{}},
		{"empty inner dynamic", spec("x", tensor.Float32, -1, -1, -1), `[[[]],[[]]]`, []int64{2, 1, 0}, []float32{}},
		{"empty batch", spec("x", tensor.Float32, -1, 3), `[]`, []int64{0, 3}, []float32{}},
		{"empty batch dynamic", spec("x", tensor.Float32, -1, -1), `[]`, []int64{0, 0}, []float32{}},
		{"empty rows", spec("x", tensor.Int32, -1, -1, 5), `[[], []]`, []int64{2, 0, 5}, []int32{}},
		{"empty fixed batch", spec("x", tensor.Float32, 2, 3), `[]`, nil, nil},
		{"empty strings", spec("x", tensor.String, -1), `[]`, []int64{0}, []string{}},
		{"whitespace", spec("x", tensor.Float32, -1, -1), " [ [ 1 , 2 ] ,\n\t[3,4]\r] ", []int64{2, 2}, []float32{1, 2, 3, 4}},
		{"rank 4 batch", spec("x", tensor.Uint8, -1, 1, 2, 2), `[[[1,2],[3,4]]]`, []int64{1, 1, 2, 2}, []uint8{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := DecodeRequest([]byte(`{"x": `+c.value+`}`), []tensor.Spec{c.spec})
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
			if n := int(shapeSize(got.Shape)); n != got.Len() {
				t.Errorf("Len() = %d, product(shape) = %d", got.Len(), n)
			}
		})
	}
}

func TestDecodeMultipleInputs(t *testing.T) {
	specs := []tensor.Spec{
		{Name: "ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true},
		{Name: "mask", DType: tensor.Int64, Shape: []int64{-1, -1}},
		{Name: "flags", DType: tensor.Bool, Shape: []int64{-1}},
		{Name: "text", DType: tensor.String, Shape: []int64{-1}},
		{Name: "temp", DType: tensor.Float32, Shape: []int64{}},
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
	specs []tensor.Spec
	body  string
	msg   string
}

func TestDecodeErrors(t *testing.T) {
	f := []tensor.Spec{spec("input", tensor.Float32, -1, 4)}
	two := []tensor.Spec{spec("a", tensor.Float32, -1), {Name: "b", DType: tensor.Int64, Shape: []int64{-1}}}
	img := []tensor.Spec{spec("x", tensor.Float32, -1, 3, 224, 224)}
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
		{"control char in string", []tensor.Spec{spec("s", tensor.String, -1)}, "{\"s\": [\"a\x01\"]}", `Invalid JSON body: invalid character '\x01' in string literal at offset 9`},
		{"bad escape", []tensor.Spec{spec("s", tensor.String, -1)}, `{"s": ["a\x"]}`, `Invalid JSON body: invalid escape sequence in string literal at offset 9`},
		{"bad unicode escape", []tensor.Spec{spec("s", tensor.String, -1)}, `{"s": ["\u12G4"]}`, `Invalid JSON body: invalid \u escape in string literal at offset 8`},
		{"unterminated string", []tensor.Spec{spec("s", tensor.String, -1)}, `{"s": ["abc`, `Invalid JSON body: unexpected end of input at offset 11`},
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
		{"missing first in order", []tensor.Spec{spec("p", tensor.Float32, -1), spec("q", tensor.Float32, -1)}, `{}`, "Missing required input: 'p'"},
		{"malformed beats missing", two, `{"b": [1]`, "Invalid JSON body: unexpected end of input at offset 9"},

		// Kinds of values.
		{"object for tensor", f, `{"input": {"a": 1}}`, "Invalid input type for 'input': expected array"},
		{"string for tensor", f, `{"input": "abc"}`, "Invalid input type for 'input': expected array"},
		{"null for tensor", f, `{"input": null}`, "Invalid input type for 'input': expected array"},
		{"bool for tensor", f, `{"input": true}`, "Invalid input type for 'input': expected array"},
		{"number for rank 2", f, `{"input": 1}`, "Invalid input type for 'input': expected array"},
		{"number for [3]", []tensor.Spec{spec("v", tensor.Float32, 3)}, `{"v": 1}`, "Invalid input type for 'v': expected array"},
		{"string for [-1] float", []tensor.Spec{spec("v", tensor.Float32, -1)}, `{"v": "1"}`, "Invalid input type for 'v': expected array"},
		{"number for [-1] string", []tensor.Spec{spec("v", tensor.String, -1)}, `{"v": 1}`, "Invalid input type for 'v': expected array"},
		{"object for unknown rank", []tensor.Spec{{Name: "v", DType: tensor.Float32}}, `{"v": {}}`, "Invalid input type for 'v': expected array"},
		{"array for rank 0", []tensor.Spec{spec("v", tensor.Float32)}, `{"v": [1]}`, "Invalid input type for 'v': expected number"},
		{"string for rank 0", []tensor.Spec{spec("v", tensor.Int64)}, `{"v": "1"}`, "Invalid input type for 'v': expected number"},
		{"null for rank 0", []tensor.Spec{spec("v", tensor.Float64)}, `{"v": null}`, "Invalid input type for 'v': expected number"},
		{"bool for rank 0 number", []tensor.Spec{spec("v", tensor.Float64)}, `{"v": true}`, "Invalid input type for 'v': expected number"},
		{"number for rank 0 bool", []tensor.Spec{spec("v", tensor.Bool)}, `{"v": 1}`, "Invalid input type for 'v': expected boolean"},
		{"array for rank 0 bool", []tensor.Spec{spec("v", tensor.Bool)}, `{"v": [true]}`, "Invalid input type for 'v': expected boolean"},
		{"number for rank 0 string", []tensor.Spec{spec("v", tensor.String)}, `{"v": 1}`, "Invalid input type for 'v': expected string"},
		{"object for rank 0 string", []tensor.Spec{spec("v", tensor.String)}, `{"v": {}}`, "Invalid input type for 'v': expected string"},

		// Shapes.
		{"ragged", f, `{"input": [[1,2,3,4],[1,2,3]]}`, "Invalid input for 'input': ragged array: element [1] has 3 items, expected 4"},
		{"ragged longer", f, `{"input": [[1,2,3,4],[1,2,3,4,5]]}`, "Invalid input for 'input': ragged array: element [1] has 5 items, expected 4"},
		{"ragged deep", []tensor.Spec{spec("x", tensor.Float32, -1, -1, -1)}, `{"x": [[[1,2],[3,4]],[[5,6],[7]]]}`, "Invalid input for 'x': ragged array: element [1, 1] has 1 items, expected 2"},
		{"ragged middle", []tensor.Spec{spec("x", tensor.Float32, -1, -1, -1)}, `{"x": [[[1,2],[3,4]],[[5,6]]]}`, "Invalid input for 'x': ragged array: element [1] has 1 items, expected 2"},
		{"ragged empty", []tensor.Spec{spec("x", tensor.Float32, -1, -1)}, `{"x": [[1],[]]}`, "Invalid input for 'x': ragged array: element [1] has 0 items, expected 1"},
		{"ragged after empty", []tensor.Spec{spec("x", tensor.Float32, -1, -1)}, `{"x": [[],[1]]}`, "Invalid input for 'x': ragged array: element [1] has 1 items, expected 0"},
		{"number where array", []tensor.Spec{spec("x", tensor.Float32, -1, -1, -1)}, `{"x": [[[1],[2]],[[1],3]]}`, "Invalid input for 'x': expected an array at [1, 1], got a number"},
		{"number where array 2", f, `{"input": [[1,2,3,4],5]}`, "Invalid input for 'input': expected an array at [1], got a number"},
		{"null where array", f, `{"input": [[1,2,3,4],null]}`, "Invalid input for 'input': expected an array at [1], got null"},
		{"string where array", f, `{"input": [[1,2,3,4],"x"]}`, "Invalid input for 'input': expected an array at [1], got a string"},
		{"array where number", f, `{"input": [[1,2,3,[4]]]}`, "Invalid input for 'input': expected a number at [0, 3], got an array"},
		{"array where number first", f, `{"input": [[1,[2]]]}`, "Invalid input for 'input': expected a number at [0, 1], got an array"},
		{"array where bool", []tensor.Spec{spec("x", tensor.Bool, -1, -1)}, `{"x": [[true],[[false]]]}`, "Invalid input for 'x': expected a boolean at [1, 0], got an array"},
		{"array where string", []tensor.Spec{spec("x", tensor.String, -1)}, `{"x": ["a", ["b"]]}`, "Invalid input for 'x': expected a string at [1], got an array"},
		{"rank too high", f, `{"input": [[[1,2,3,4],[1,2,3,4]]]}`, "Invalid shape for 'input': expected rank 2 [-1, 4], got rank 3 [1, 2, 4]"},
		{"rank too low", img, `{"x": [[1,2],[3,4]]}`, "Invalid shape for 'x': expected rank 4 [-1, 3, 224, 224], got rank 2 [2, 2]"},
		{"empty batch fixed", []tensor.Spec{spec("x", tensor.Float32, 2, 3)}, `{"x": []}`, "Invalid shape for 'x': expected [2, 3], got [0, 3]"},
		{"empty too deep", []tensor.Spec{spec("x", tensor.Float32, -1)}, `{"x": [[]]}`, "Invalid shape for 'x': expected rank 1 [-1], got rank 2 [1, 0]"},
		{"dim mismatch", f, `{"input": [[1,2,3]]}`, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"dim mismatch batched", f, `{"input": [1,2,3]}`, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"batch fixed 2", []tensor.Spec{spec("x", tensor.Float32, 2, 2)}, `{"x": [1, 2]}`, "Invalid shape for 'x': expected rank 2 [2, 2], got rank 1 [2]"},
		{"image dims", img, `{"x": [[[[1]],[[2]],[[3]]]]}`, "Invalid shape for 'x': expected [-1, 3, 224, 224], got [1, 3, 1, 1]"},
		{"fixed rank 1", []tensor.Spec{spec("x", tensor.Int64, 3)}, `{"x": [1, 2]}`, "Invalid shape for 'x': expected [3], got [2]"},

		// Elements.
		{"fraction for int", []tensor.Spec{spec("x", tensor.Int64, -1, -1)}, `{"x": [[1, 2, 1.5]]}`, "Invalid value for 'x' at [0, 2]: 1.5 is not an integer (int64)"},
		{"tiny fraction for int", []tensor.Spec{spec("x", tensor.Int32, -1)}, `{"x": [1e-400]}`, "Invalid value for 'x' at [0]: 1e-400 is not an integer (int32)"},
		{"negative fraction for uint", []tensor.Spec{spec("x", tensor.Uint8, -1)}, `{"x": [-0.5]}`, "Invalid value for 'x' at [0]: -0.5 is not an integer (uint8)"},
		{"uint8 300", []tensor.Spec{spec("x", tensor.Uint8, -1)}, `{"x": [1, 2, 3, 300]}`, "Invalid value for 'x' at [3]: 300 is out of range for uint8"},
		{"uint32 -1", []tensor.Spec{spec("x", tensor.Uint32, -1)}, `{"x": [-1]}`, "Invalid value for 'x' at [0]: -1 is out of range for uint32"},
		{"int64 1e20", []tensor.Spec{spec("x", tensor.Int64, -1)}, `{"x": [1e20]}`, "Invalid value for 'x' at [0]: 1e20 is out of range for int64"},
		{"int64 max+1", []tensor.Spec{spec("x", tensor.Int64, -1)}, `{"x": [9223372036854775808]}`, "Invalid value for 'x' at [0]: 9223372036854775808 is out of range for int64"},
		{"int64 min-1", []tensor.Spec{spec("x", tensor.Int64, -1)}, `{"x": [-9223372036854775809]}`, "Invalid value for 'x' at [0]: -9223372036854775809 is out of range for int64"},
		{"uint64 max+1", []tensor.Spec{spec("x", tensor.Uint64, -1)}, `{"x": [18446744073709551616]}`, "Invalid value for 'x' at [0]: 18446744073709551616 is out of range for uint64"},
		{"int8 128", []tensor.Spec{spec("x", tensor.Int8, -1)}, `{"x": [128]}`, "Invalid value for 'x' at [0]: 128 is out of range for int8"},
		{"int8 -129", []tensor.Spec{spec("x", tensor.Int8, -1)}, `{"x": [-129]}`, "Invalid value for 'x' at [0]: -129 is out of range for int8"},
		{"int16 big exp", []tensor.Spec{spec("x", tensor.Int16, -1)}, `{"x": [1e99999999999]}`, "Invalid value for 'x' at [0]: 1e99999999999 is out of range for int16"},
		{"uint16 65536", []tensor.Spec{spec("x", tensor.Uint16, -1)}, `{"x": [65536]}`, "Invalid value for 'x' at [0]: 65536 is out of range for uint16"},
		{"int rank 0", []tensor.Spec{spec("x", tensor.Int32)}, `{"x": 2.5}`, "Invalid value for 'x': 2.5 is not an integer (int32)"},
		{"int bare [-1]", []tensor.Spec{spec("x", tensor.Uint8, -1)}, `{"x": 256}`, "Invalid value for 'x': 256 is out of range for uint8"},
		{"float32 1e39", []tensor.Spec{spec("x", tensor.Float32, -1)}, `{"x": [1e39]}`, "Invalid value for 'x' at [0]: 1e39 is out of range for float32"},
		{"float32 -3.5e38", []tensor.Spec{spec("x", tensor.Float32, -1)}, `{"x": [-3.5e38]}`, "Invalid value for 'x' at [0]: -3.5e38 is out of range for float32"},
		{"float64 1e309", []tensor.Spec{spec("x", tensor.Float64, -1)}, `{"x": [1e309]}`, "Invalid value for 'x' at [0]: 1e309 is out of range for float64"},
		{"float16 65520", []tensor.Spec{spec("x", tensor.Float16, -1)}, `{"x": [65519, 65520]}`, "Invalid value for 'x' at [1]: 65520 is out of range for float16"},
		{"float16 -1e5", []tensor.Spec{spec("x", tensor.Float16, -1)}, `{"x": [-1e5]}`, "Invalid value for 'x' at [0]: -1e5 is out of range for float16"},
		{"bfloat16 1e39", []tensor.Spec{spec("x", tensor.BFloat16, -1)}, `{"x": [1e39]}`, "Invalid value for 'x' at [0]: 1e39 is out of range for bfloat16"},
		{"long literal clipped", []tensor.Spec{spec("x", tensor.Uint8, -1)}, `{"x": [` + strings.Repeat("9", 300) + `]}`, "Invalid value for 'x' at [0]: " + strings.Repeat("9", 40) + "... is out of range for uint8"},
		{"number for bool", []tensor.Spec{spec("x", tensor.Bool, -1)}, `{"x": [true, 1]}`, "Invalid value for 'x' at [1]: expected a boolean, got a number"},
		{"string for bool", []tensor.Spec{spec("x", tensor.Bool, -1)}, `{"x": ["true"]}`, "Invalid value for 'x' at [0]: expected a boolean, got a string"},
		{"null for bool", []tensor.Spec{spec("x", tensor.Bool, -1)}, `{"x": [null]}`, "Invalid value for 'x' at [0]: expected a boolean, got null"},
		{"number for string", []tensor.Spec{spec("x", tensor.String, -1)}, `{"x": ["a", 2]}`, "Invalid value for 'x' at [1]: expected a string, got a number"},
		{"bool for string", []tensor.Spec{spec("x", tensor.String, -1)}, `{"x": [false]}`, "Invalid value for 'x' at [0]: expected a string, got a boolean"},
		{"null in floats", []tensor.Spec{spec("x", tensor.Float32, -1)}, `{"x": [1, 2, null]}`, "Invalid value for 'x' at [2]: expected a number, got null"},
		{"null deep", f, `{"input": [[1, 2, 3, 4], [1, null, 3, 4]]}`, "Invalid value for 'input' at [1, 1]: expected a number, got null"},
		{"null first", f, `{"input": [[null]]}`, "Invalid value for 'input' at [0, 0]: expected a number, got null"},
		{"string in floats", []tensor.Spec{spec("x", tensor.Float64, -1)}, `{"x": ["1.5"]}`, "Invalid value for 'x' at [0]: expected a number, got a string"},
		{"bool in ints", []tensor.Spec{spec("x", tensor.Int64, -1)}, `{"x": [true]}`, "Invalid value for 'x' at [0]: expected a number, got a boolean"},
		{"object in floats", []tensor.Spec{spec("x", tensor.Float32, -1)}, `{"x": [{}]}`, "Invalid value for 'x' at [0]: expected a number, got an object"},
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
			var e *tensorjson.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *tensorjson.Error", err, err)
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
	specs := []tensor.Spec{spec("a", tensor.Float32, -1)}
	for body, input := range map[string]string{
		`{"a": [null]}`: "a",
		`{"b": 1}`:      "b",
		`{}`:            "a",
		`[1]`:           "",
		`{`:             "",
	} {
		_, err := DecodeRequest([]byte(body), specs)
		var e *tensorjson.Error
		if !errors.As(err, &e) || e.Input != input {
			t.Errorf("%s: got %#v, want Input %q", body, err, input)
		}
	}
}

func TestDecodeInvalidSpec(t *testing.T) {
	_, err := DecodeRequest([]byte(`{}`), []tensor.Spec{{Name: "x", DType: tensor.Invalid}})
	var e *tensorjson.Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("invalid dtype: got %v, want a non-client error", err)
	}
}

func TestDecodeNesting(t *testing.T) {
	s := []tensor.Spec{{Name: "x", DType: tensor.Float32}}
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
		{"\"héllo 中文 😀\"", "héllo 中文 😀"},
		{"\"\u2028\"", "\u2028"},
		{`"\u0000"`, "\x00"},
		{"\"\x7f\"", "\x7f"},
	}
	for _, c := range cases {
		got := decodeOne(t, spec("s", tensor.String), `{"s": `+c.in+`}`)
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
	got := decodeOne(t, spec("s", tensor.String, -1), sb.String())
	if !reflect.DeepEqual(got.Data, want) {
		t.Errorf("strings: got %q", got.Data)
	}
}

// TestDecodeDoesNotAliasBody checks that results survive reuse of the body.
// TestDecodeInvalidUnicode: a string element that is not valid Unicode is
// refused, naming the input and element, never silently replaced; in a key
// it is malformed JSON.
func TestDecodeInvalidUnicode(t *testing.T) {
	s := []tensor.Spec{spec("s", tensor.String, -1)}
	scalar := []tensor.Spec{spec("s", tensor.String)}
	runErrCases(t, []errCase{
		{"invalid byte", s, "{\"s\": [\"ok\", \"bad \xff utf8\"]}", "Invalid value for 's' at [1]: invalid UTF-8 in string"},
		{"truncated sequence", s, "{\"s\": [\"trunc \xe4\xb8\"]}", "Invalid value for 's' at [0]: invalid UTF-8 in string"},
		{"overlong encoding", s, "{\"s\": [\"\xc0\xaf\"]}", "Invalid value for 's' at [0]: invalid UTF-8 in string"},
		{"encoded surrogate", s, "{\"s\": [\"\xed\xa0\x80\"]}", "Invalid value for 's' at [0]: invalid UTF-8 in string"},
		{"lone high surrogate", s, `{"s": ["a\ud800b"]}`, "Invalid value for 's' at [0]: lone surrogate \\u escape in string"},
		{"lone low surrogate", s, `{"s": ["\udc00"]}`, "Invalid value for 's' at [0]: lone surrogate \\u escape in string"},
		{"high then normal escape", s, `{"s": ["\ud800\u0041"]}`, "Invalid value for 's' at [0]: lone surrogate \\u escape in string"},
		{"rank 0", scalar, "{\"s\": \"\xff\"}", "Invalid value for 's': invalid UTF-8 in string"},
		{"in a key", s, "{\"s\xff\": [\"a\"]}", "Invalid JSON body: invalid UTF-8 in string at offset 3"},
	})
}

func TestDecodeDoesNotAliasBody(t *testing.T) {
	body := []byte(`{"s": ["abc", "d\u00e9f"], "f": [1.5]}`)
	out, err := DecodeRequest(body, []tensor.Spec{spec("s", tensor.String, -1), spec("f", tensor.Float32, -1)})
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
	specs := []tensor.Spec{spec("x", tensor.Float64, -1, 2), {Name: "s", DType: tensor.String, Shape: []int64{-1}}}
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

func tensorsString(ts []*tensor.Tensor) string {
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

// shapeSize is the number of elements a shape holds.
func shapeSize(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestDecodeMultipleInputsHinted: a large body of several inputs is
// decoded with each numeric input allocated once at its size (its slice's
// capacity is its length: no scratch buffer copied out), to the same
// tensors as without the hints.
func TestDecodeMultipleInputsHinted(t *testing.T) {
	specs := []tensor.Spec{
		{Name: "ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true},
		{Name: "mask", DType: tensor.Int32, Shape: []int64{-1, -1}},
		{Name: "flags", DType: tensor.Bool, Shape: []int64{-1}},
		{Name: "text", DType: tensor.String, Shape: []int64{-1}},
		{Name: "temp", DType: tensor.Float32, Shape: []int64{}},
		{Name: "x", DType: tensor.Float32, Shape: []int64{-1}},
	}
	var b strings.Builder
	row := func(n int, v string) string { return "[" + strings.TrimSuffix(strings.Repeat(v+", ", n), ", ") + "]" }
	fmt.Fprintf(&b, `{"text": ["a,b", "c\":d"], "ids": [%s, %s], "temp": 0.5, `, row(301, "12345"), row(301, "-7"))
	fmt.Fprintf(&b, `"flags": %s, "mask" : [%s], "x": %s}`, row(257, "true"), row(99, "1"), row(1000, "-1.25e-3"))
	body := []byte(b.String())
	commas := int64(strings.Count(b.String(), ","))
	sc := tensorjson.ScanObject(body)
	hinted, err := decodeRequest(body, specs, 0, commas+1, &sc)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := decodeRequest(body, specs, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range specs {
		if !reflect.DeepEqual(hinted[i], plain[i]) {
			t.Errorf("%s: hinted %v, plain %v", specs[i].Name, hinted[i], plain[i])
		}
	}
	for _, i := range []int{0, 1, 2, 5} {
		v := reflect.ValueOf(hinted[i].Data)
		if v.Cap() != v.Len() {
			t.Errorf("%s: %d elements in a slice of capacity %d, want it allocated at its size", specs[i].Name, v.Len(), v.Cap())
		}
	}
}
