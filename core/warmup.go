package core

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
)

// WarmUp runs one inference on inputs of ones ("1" for text, true for
// booleans), with every dynamic dimension set to 1, so that ONNX Runtime's
// lazy initialisation (allocations, kernel selection, shader compilation on
// GPU providers) happens before the first request. Ones, not zeros: an
// input may be a divisor, and an integer division by zero is undefined
// (some ONNX Runtime builds raise SIGFPE and the process dies). Optional
// inputs take their defaults. It fails for inputs it cannot make up:
// non-tensor inputs and tensors of unknown rank.
func WarmUp(r Runner) error {
	specs := r.Specs()
	inputs := make([]*tensor.Tensor, len(specs))
	for i, s := range specs {
		if !s.Required {
			continue
		}
		if s.Shape == nil {
			return fmt.Errorf("warm-up: input %q has no known rank", s.Name)
		}
		t, err := onesTensor(s)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		inputs[i] = t
	}
	res, err := r.Predict(context.Background(), inputs)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	res.Close()
	return nil
}

// One in float16 and bfloat16, as their bits.
const (
	float16One  = 0x3c00
	bfloat16One = 0x3f80
)

// onesTensor makes a tensor of the spec's type and shape, dynamic
// dimensions set to 1, holding ones.
func onesTensor(s tensor.Spec) (*tensor.Tensor, error) {
	shape, n := s.SmallestShape()
	t := &tensor.Tensor{DType: s.DType, Shape: shape}
	switch s.DType {
	case tensor.Float32:
		t.Data = filled[float32](n, 1)
	case tensor.Float64:
		t.Data = filled[float64](n, 1)
	case tensor.Float16:
		t.Data = filled[uint16](n, float16One)
	case tensor.BFloat16:
		t.Data = filled[uint16](n, bfloat16One)
	case tensor.Uint16:
		t.Data = filled[uint16](n, 1)
	case tensor.Int8:
		t.Data = filled[int8](n, 1)
	case tensor.Int16:
		t.Data = filled[int16](n, 1)
	case tensor.Int32:
		t.Data = filled[int32](n, 1)
	case tensor.Int64:
		t.Data = filled[int64](n, 1)
	case tensor.Uint8:
		t.Data = filled[uint8](n, 1)
	case tensor.Uint32:
		t.Data = filled[uint32](n, 1)
	case tensor.Uint64:
		t.Data = filled[uint64](n, 1)
	case tensor.Bool:
		t.Data = filled(n, true)
	case tensor.String:
		t.Data = filled(n, "1")
	default:
		return nil, fmt.Errorf("input %q has unsupported type %v", s.Name, s.DType)
	}
	return t, nil
}

// filled is n copies of v.
func filled[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
