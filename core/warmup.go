package core

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
)

// WarmUp runs one inference on zero-filled inputs (empty strings for text),
// with every dynamic dimension set to 1, so that ONNX Runtime's lazy
// initialisation (allocations, kernel selection, shader compilation on GPU
// providers) happens before the first request. Optional inputs take their
// defaults. It fails for inputs it cannot make up: non-tensor inputs and
// tensors of unknown rank.
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
		t, err := zeroTensor(s)
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

// zeroTensor makes a tensor of the spec's type and shape, dynamic
// dimensions set to 1, holding zeros.
func zeroTensor(s tensor.Spec) (*tensor.Tensor, error) {
	shape, n := s.SmallestShape()
	t := &tensor.Tensor{DType: s.DType, Shape: shape}
	switch s.DType {
	case tensor.Float32:
		t.Data = make([]float32, n)
	case tensor.Float64:
		t.Data = make([]float64, n)
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		t.Data = make([]uint16, n)
	case tensor.Int8:
		t.Data = make([]int8, n)
	case tensor.Int16:
		t.Data = make([]int16, n)
	case tensor.Int32:
		t.Data = make([]int32, n)
	case tensor.Int64:
		t.Data = make([]int64, n)
	case tensor.Uint8:
		t.Data = make([]uint8, n)
	case tensor.Uint32:
		t.Data = make([]uint32, n)
	case tensor.Uint64:
		t.Data = make([]uint64, n)
	case tensor.Bool:
		t.Data = make([]bool, n)
	case tensor.String:
		t.Data = make([]string, n)
	default:
		return nil, fmt.Errorf("input %q has unsupported type %v", s.Name, s.DType)
	}
	return t, nil
}
