package main_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestShapeModels serves models with rank-0 inputs and outputs of every
// numeric type, an input and outputs of unknown rank (one declared without
// any type), fixed and dynamic zero-sized dimensions, and rank-0 float16,
// bfloat16 and string inputs and outputs.
// Valid requests get the right values, bad ones a 400 naming the input;
// nothing panics.
func TestShapeModels(t *testing.T) {
	t.Parallel()
	sequential(t)
	type call struct {
		body   string
		status int
		want   string // the body for a 200, the detail otherwise
	}
	tests := []struct {
		model string
		info  string // the inputs and outputs of /info
		calls []call
	}{
		{"scalars.onnx",
			`{"inputs":[{"name":"f32","type":"float32","shape":[],"required":true},{"name":"f64","type":"float64","shape":[],"required":true},{"name":"i8","type":"int8","shape":[],"required":true},{"name":"i16","type":"int16","shape":[],"required":true},{"name":"i32","type":"int32","shape":[],"required":true},{"name":"i64","type":"int64","shape":[],"required":true},{"name":"u8","type":"uint8","shape":[],"required":true},{"name":"u16","type":"uint16","shape":[],"required":true},{"name":"u32","type":"uint32","shape":[],"required":true},{"name":"u64","type":"uint64","shape":[],"required":true},{"name":"bool","type":"bool","shape":[],"required":true}],` +
				`"outputs":[{"name":"f32_out","type":"float32","shape":[]},{"name":"f64_out","type":"float64","shape":[]},{"name":"i8_out","type":"int8","shape":[]},{"name":"i16_out","type":"int16","shape":[]},{"name":"i32_out","type":"int32","shape":[]},{"name":"i64_out","type":"int64","shape":[]},{"name":"u8_out","type":"uint8","shape":[]},{"name":"u16_out","type":"uint16","shape":[]},{"name":"u32_out","type":"uint32","shape":[]},{"name":"u64_out","type":"uint64","shape":[]},{"name":"bool_out","type":"bool","shape":[]},{"name":"f32_x2","type":"float32","shape":[],"description":"f32 * 2"}]}`,
			[]call{
				{`{"f32":1.5,"f64":2.5,"i8":-128,"i16":-32768,"i32":2147483647,"i64":-9223372036854775808,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"bool":true}`, 200,
					`{"f32_out":[1.5],"f64_out":[2.5],"i8_out":[-128],"i16_out":[-32768],"i32_out":[2147483647],"i64_out":[-9223372036854775808],"u8_out":[255],"u16_out":[65535],"u32_out":[4294967295],"u64_out":[18446744073709551615],"bool_out":[true],"f32_x2":[3]}`},
				{`{"f32":0,"f64":0,"i8":0,"i16":0,"i32":0,"i64":0,"u8":0,"u16":0,"u32":0,"u64":0,"bool":false}`, 200,
					`{"f32_out":[0],"f64_out":[0],"i8_out":[0],"i16_out":[0],"i32_out":[0],"i64_out":[0],"u8_out":[0],"u16_out":[0],"u32_out":[0],"u64_out":[0],"bool_out":[false],"f32_x2":[0]}`},
				{`{"f32":[1],"f64":0,"i8":0,"i16":0,"i32":0,"i64":0,"u8":0,"u16":0,"u32":0,"u64":0,"bool":false}`, 400, "Invalid input type for 'f32': expected number"},
				{`{"f32":1,"f64":0,"i8":128,"i16":0,"i32":0,"i64":0,"u8":0,"u16":0,"u32":0,"u64":0,"bool":false}`, 400, "Invalid value for 'i8': 128 is out of range for int8"},
				{`{"f32":1,"f64":0,"i8":0,"i16":0,"i32":0,"i64":0,"u8":0,"u16":0,"u32":0,"u64":0,"bool":1}`, 400, "Invalid input type for 'bool': expected boolean"},
				{`{"f32":1,"f64":0,"i8":0,"i16":0,"i32":0,"i64":0,"u8":0,"u16":0,"u32":0,"u64":0}`, 400, "Missing required input: 'bool'"},
			}},
		{"scalars_special.onnx",
			`{"inputs":[{"name":"f16","type":"float16","shape":[],"required":true},{"name":"bf16","type":"bfloat16","shape":[],"required":true},{"name":"str","type":"string","shape":[],"required":true}],` +
				`"outputs":[{"name":"f16_out","type":"float16","shape":[]},{"name":"bf16_out","type":"bfloat16","shape":[]},{"name":"str_out","type":"string","shape":[]}]}`,
			[]call{
				{`{"f16":1.5,"bf16":2.5,"str":"hi"}`, 200, `{"f16_out":[1.5],"bf16_out":[2.5],"str_out":["hi"]}`},
				{`{"f16":-0.25,"bf16":1e30,"str":""}`, 200, `{"f16_out":[-0.25],"bf16_out":[1.00025555e+30],"str_out":[""]}`},
				{`{"f16":65504,"bf16":0,"str":"Grüße"}`, 200, `{"f16_out":[65504],"bf16_out":[0],"str_out":["Grüße"]}`},
				{`{"f16":1e6,"bf16":2.5,"str":"hi"}`, 400, "Invalid value for 'f16': 1e6 is out of range for float16"},
				{`{"f16":1,"bf16":2.5,"str":["hi"]}`, 400, "Invalid input type for 'str': expected string"},
			}},
		{"unknown_rank.onnx",
			`{"inputs":[{"name":"x","type":"float32","required":true,"description":"any rank"}],` +
				`"outputs":[{"name":"y","type":"float32","description":"x"},{"name":"total","type":"float32","description":"sum of all elements (rank 0)"},{"name":"neg","type":"float32","description":"-x; declared without a type"}]}`,
			[]call{
				{`{"x":5}`, 200, `{"y":[5],"total":[5],"neg":[-5]}`},
				{`{"x":[[1,2],[3,4]]}`, 200, `{"y":[[1,2],[3,4]],"total":[10],"neg":[[-1,-2],[-3,-4]]}`},
				{`{"x":[]}`, 200, `{"y":[],"total":[0],"neg":[]}`},
				{`{"x":[[[0.5]]]}`, 200, `{"y":[[[0.5]]],"total":[0.5],"neg":[[[-0.5]]]}`},
				{`{"x":-2}`, 200, `{"y":[-2],"total":[-2],"neg":[2]}`},
				{`{"x":[[1],[2,3]]}`, 400, "Invalid input for 'x': ragged array: element [1] has 2 items, expected 1"},
				{`{"x":"a"}`, 400, "Invalid input type for 'x': expected array"},
				{`{"x":[true]}`, 400, "Invalid value for 'x' at [0]: expected a number, got a boolean"},
			}},
		{"zero_dims.onnx",
			`{"inputs":[{"name":"fixed","type":"float32","shape":[0,3],"required":true,"description":"always empty"},{"name":"dyn","type":"float32","shape":[-1,2],"required":true},{"name":"half","type":"float16","shape":[-1],"required":true},{"name":"text","type":"string","shape":[-1],"required":true}],` +
				`"outputs":[{"name":"fixed_out","type":"float32","shape":[0,3]},{"name":"dyn_out","type":"float32","shape":[-1,2]},{"name":"dyn_sum","type":"float32","shape":[-1],"description":"row sums"},{"name":"half_out","type":"float16","shape":[-1]},{"name":"text_out","type":"string","shape":[-1]}]}`,
			[]call{
				{`{"fixed":[],"dyn":[],"half":[],"text":[]}`, 200, `{"fixed_out":[],"dyn_out":[],"dyn_sum":[],"half_out":[],"text_out":[]}`},
				{`{"fixed":[],"dyn":[[1,2],[3,4.5]],"half":[0.5,-2],"text":["a",""]}`, 200, `{"fixed_out":[],"dyn_out":[[1,2],[3,4.5]],"dyn_sum":[3,7.5],"half_out":[0.5,-2],"text_out":["a",""]}`},
				{`{"fixed":[[1,2,3]],"dyn":[],"half":[],"text":[]}`, 400, "Invalid shape for 'fixed': expected [0, 3], got [1, 3]"},
				{`{"fixed":[],"dyn":[[1]],"half":[],"text":[]}`, 400, "Invalid shape for 'dyn': expected [-1, 2], got [1, 1]"},
				{`{"fixed":[],"dyn":[],"half":[[]],"text":[]}`, 400, "Invalid shape for 'half': expected rank 1 [-1], got rank 2 [1, 0]"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			s := startServer(t, model(tt.model))
			// /info describes every input and output.
			var info, want map[string]any
			if err := json.Unmarshal(s.get("/info").Body, &info); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.info), &want); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"inputs", "outputs"} {
				if !reflect.DeepEqual(info[k], want[k]) {
					got, _ := json.Marshal(info[k])
					t.Errorf("/info %s = %s\nwant %s", k, got, mustMarshal(want[k]))
				}
			}
			// /openapi.json is a valid document.
			doc, err := openapi3.NewLoader().LoadFromData(s.get("/openapi.json").Body)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("openapi.json: %v", err)
			}
			for _, c := range tt.calls {
				r := s.predict(c.body)
				if r.Status != c.status {
					t.Errorf("%s: status %d, want %d; body %s", c.body, r.Status, c.status, r.Body)
					continue
				}
				got := string(r.Body)
				if c.status != 200 {
					got = r.Detail(t)
				}
				if got != c.want {
					t.Errorf("%s:\ngot  %s\nwant %s", c.body, got, c.want)
				}
			}
			s.stopNoPanic()
		})
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
