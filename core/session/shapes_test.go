package session_test

import (
	"testing"

	"github.com/svc-dev/svc/core/config"
)

// TestPredictShapes runs models with rank-0, unknown-rank and zero-sized
// inputs and outputs (a rank-0 output comes back as a one-element array).
func TestPredictShapes(t *testing.T) {
	tests := []struct {
		model, body, want string
	}{
		{"scalars.onnx",
			`{"f32":1.5,"f64":2.5,"i8":-1,"i16":2,"i32":3,"i64":4,"u8":5,"u16":6,"u32":7,"u64":8,"bool":true}`,
			`{"f32_out":[1.5],"f64_out":[2.5],"i8_out":[-1],"i16_out":[2],"i32_out":[3],"i64_out":[4],"u8_out":[5],"u16_out":[6],"u32_out":[7],"u64_out":[8],"bool_out":[true],"f32_x2":[3]}`},
		{"scalars_special.onnx", `{"f16":1.5,"bf16":-2.5,"str":"hé"}`, `{"f16_out":[1.5],"bf16_out":[-2.5],"str_out":["hé"]}`},
		{"unknown_rank.onnx", `{"x":5}`, `{"y":[5],"total":[5],"neg":[-5]}`},
		{"unknown_rank.onnx", `{"x":[[1,2],[3,4]]}`, `{"y":[[1,2],[3,4]],"total":[10],"neg":[[-1,-2],[-3,-4]]}`},
		{"unknown_rank.onnx", `{"x":5}`, `{"y":[5],"total":[5],"neg":[-5]}`},
		{"zero_dims.onnx", `{"fixed":[],"dyn":[],"half":[],"text":[]}`, `{"fixed_out":[],"dyn_out":[],"dyn_sum":[],"half_out":[],"text_out":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p := newPredictor(t, model(tt.model), config.Runtime{})
			if got := predictJSON(t, p, tt.body); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestPredictLearntScalar: an output of unknown shape is rank 0 for one
// input and not for the next; both runs succeed.
func TestPredictLearntScalar(t *testing.T) {
	p := newPredictor(t, model("unknown_rank.onnx"), config.Runtime{})
	for _, tt := range []struct{ body, want string }{
		{`{"x":5}`, `{"y":[5],"total":[5],"neg":[-5]}`},
		{`{"x":[]}`, `{"y":[],"total":[0],"neg":[]}`},
		{`{"x":[1.5]}`, `{"y":[1.5],"total":[1.5],"neg":[-1.5]}`},
		{`{"x":7}`, `{"y":[7],"total":[7],"neg":[-7]}`},
		{`{"x":7}`, `{"y":[7],"total":[7],"neg":[-7]}`},
	} {
		if got := predictJSON(t, p, tt.body); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.body, got, tt.want)
		}
	}
}
