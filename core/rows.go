package core

import (
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
)

// concatRows joins tensors along the first dimension. All must have the
// same type and the same non-batch dimensions.
func concatRows(parts []*tensor.Tensor) (*tensor.Tensor, error) {
	first := parts[0]
	var rows int64
	for _, p := range parts {
		if p.DType != first.DType || len(p.Shape) != len(first.Shape) || len(p.Shape) == 0 {
			return nil, fmt.Errorf("cannot merge %s%v with %s%v", p.DType, p.Shape, first.DType, first.Shape)
		}
		rows += p.Shape[0]
	}
	shape := append([]int64{rows}, first.Shape[1:]...)
	out := &tensor.Tensor{DType: first.DType, Shape: shape}
	switch first.Data.(type) {
	case []float32:
		out.Data = concatData[float32](parts)
	case []float64:
		out.Data = concatData[float64](parts)
	case []int8:
		out.Data = concatData[int8](parts)
	case []int16:
		out.Data = concatData[int16](parts)
	case []int32:
		out.Data = concatData[int32](parts)
	case []int64:
		out.Data = concatData[int64](parts)
	case []uint8:
		out.Data = concatData[uint8](parts)
	case []uint16:
		out.Data = concatData[uint16](parts)
	case []uint32:
		out.Data = concatData[uint32](parts)
	case []uint64:
		out.Data = concatData[uint64](parts)
	case []bool:
		out.Data = concatData[bool](parts)
	case []string:
		out.Data = concatData[string](parts)
	default:
		return nil, fmt.Errorf("cannot merge %T", first.Data)
	}
	return out, nil
}

func concatData[T any](parts []*tensor.Tensor) []T {
	n := 0
	for _, p := range parts {
		n += len(p.Data.([]T))
	}
	out := make([]T, 0, n)
	for _, p := range parts {
		out = append(out, p.Data.([]T)...)
	}
	return out
}

// sliceRows returns rows [from, to) of t, sharing its data.
func sliceRows(t *tensor.Tensor, from, to int64) *tensor.Tensor {
	row := int64(1)
	for _, d := range t.Shape[1:] {
		row *= d
	}
	shape := append([]int64{to - from}, t.Shape[1:]...)
	out := &tensor.Tensor{DType: t.DType, Shape: shape}
	lo, hi := from*row, to*row
	switch d := t.Data.(type) {
	case []float32:
		out.Data = d[lo:hi]
	case []float64:
		out.Data = d[lo:hi]
	case []int8:
		out.Data = d[lo:hi]
	case []int16:
		out.Data = d[lo:hi]
	case []int32:
		out.Data = d[lo:hi]
	case []int64:
		out.Data = d[lo:hi]
	case []uint8:
		out.Data = d[lo:hi]
	case []uint16:
		out.Data = d[lo:hi]
	case []uint32:
		out.Data = d[lo:hi]
	case []uint64:
		out.Data = d[lo:hi]
	case []bool:
		out.Data = d[lo:hi]
	case []string:
		out.Data = d[lo:hi]
	}
	return out
}
