package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

func f32(shape ...int64) *tensor.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: make([]float32, n)}
}

func multiInputs(features, ids, mask, text int64) []*tensor.Tensor {
	return []*tensor.Tensor{
		f32(features, 3),
		{DType: tensor.Int64, Shape: []int64{ids, 2}, Data: make([]int64, ids*2)},
		{DType: tensor.Bool, Shape: []int64{mask, 2}, Data: make([]bool, mask*2)},
		{DType: tensor.String, Shape: []int64{text}, Data: make([]string, text)},
	}
}

// TestInputDimensionCheck: inputs that disagree on a named dimension, and
// an empty batch on a model with a batch dimension, are refused before
// ONNX Runtime runs; zero-sized dimensions elsewhere run.
func TestInputDimensionCheck(t *testing.T) {
	multi := newPredictor(t, model("multi_input.onnx"), config.Runtime{})
	classifier := newPredictor(t, model("classifier.onnx"), config.Runtime{})
	zero := newPredictor(t, model("zero_dims.onnx"), config.Runtime{})
	zeroInputs := []*tensor.Tensor{
		f32(0, 3), f32(0, 2),
		{DType: tensor.Float16, Shape: []int64{0}, Data: []uint16{}},
		{DType: tensor.String, Shape: []int64{0}, Data: []string{}},
	}
	tests := []struct {
		name   string
		p      *session.Predictor
		inputs []*tensor.Tensor
		input  string // "" = runs
		msg    string
	}{
		{"multi_input agrees", multi, multiInputs(2, 2, 2, 2), "", ""},
		{"multi_input empty batch", multi, multiInputs(0, 0, 0, 0), "features", "Empty batch for 'features': send at least one item"},
		{"multi_input batch sizes differ", multi, multiInputs(2, 1, 2, 2), "ids", "Invalid shape for 'ids': dimension 'batch' is 1 here but 2 in 'features'"},
		{"multi_input last differs", multi, multiInputs(1, 1, 1, 3), "text", "Invalid shape for 'text': dimension 'batch' is 3 here but 1 in 'features'"},
		{"classifier empty batch", classifier, []*tensor.Tensor{f32(0, 4)}, "input", "Empty batch for 'input': send at least one item"},
		{"classifier one row", classifier, []*tensor.Tensor{f32(1, 4)}, "", ""},
		{"zero_dims all empty", zero, zeroInputs, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.p.Predict(context.Background(), tt.inputs)
			if tt.input == "" {
				if err != nil {
					t.Fatalf("Predict: %v", err)
				}
				res.Close()
				return
			}
			var ie *core.InputError
			if !errors.As(err, &ie) || ie.Input != tt.input || ie.Message != tt.msg {
				t.Fatalf("Predict error = %#v, want InputError{%q, %q}", err, tt.input, tt.msg)
			}
		})
	}
}
