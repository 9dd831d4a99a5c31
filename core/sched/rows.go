package sched

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
			return nil, fmt.Errorf("cannot merge %s%s with %s%s", p.DType, tensor.FormatShape(p.Shape), first.DType, tensor.FormatShape(first.Shape))
		}
		rows += p.Shape[0]
	}
	shape := append([]int64{rows}, first.Shape[1:]...)
	out := &tensor.Tensor{DType: first.DType, Shape: shape}
	switch first.Data.(type) {
	case []float32:
		out.Data = concatData(parts, makeRows[float32])
	case []float64:
		out.Data = concatData(parts, makeRows[float64])
	case []int8:
		out.Data = concatData(parts, makeRows[int8])
	case []int16:
		out.Data = concatData(parts, makeRows[int16])
	case []int32:
		out.Data = concatData(parts, makeRows[int32])
	case []int64:
		out.Data = concatData(parts, makeRows[int64])
	case []uint8:
		out.Data = concatData(parts, makeRows[uint8])
	case []uint16:
		out.Data = concatData(parts, makeRows[uint16])
	case []uint32:
		out.Data = concatData(parts, makeRows[uint32])
	case []uint64:
		out.Data = concatData(parts, makeRows[uint64])
	case []bool:
		out.Data = concatData(parts, makeRows[bool])
	case []string:
		out.Data = concatData(parts, func(n int) []string { return make([]string, 0, n) })
	default:
		return nil, fmt.Errorf("cannot merge %T", first.Data)
	}
	return out, nil
}

func concatData[T any](parts []*tensor.Tensor, alloc func(n int) []T) []T {
	n := 0
	for _, p := range parts {
		n += len(p.Data.([]T))
	}
	out := alloc(n)
	for _, p := range parts {
		out = append(out, p.Data.([]T)...)
	}
	return out
}

// makeRows is an empty slice with room for n elements, large ones from
// the tensor pools (the batcher gives merged inputs back after the run).
func makeRows[T tensor.Number](n int) []T { return tensor.MakeSlice[T](n)[:0] }

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
