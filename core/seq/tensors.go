package seq

import (
	"fmt"
	"reflect"

	"github.com/svc-dev/svc/core/tensor"
)

// initialState is a state's first value: the input's shape with its batch
// axis 1 and any other dynamic axis 0 (an empty cache), every element
// value.
func initialState(spec tensor.Spec, axis int, value float64) (*tensor.Tensor, error) {
	shape := make([]int64, len(spec.Shape))
	n := 1
	for a, d := range spec.Shape {
		switch {
		case a == axis:
			d = 1
		case d < 0:
			d = 0
		}
		shape[a] = d
		n *= int(d)
	}
	data, err := filled(spec.DType, n, value)
	if err != nil {
		return nil, fmt.Errorf("state %q: %w", spec.Name, err)
	}
	return &tensor.Tensor{DType: spec.DType, Shape: shape, Data: data}, nil
}

func filled(dt tensor.DType, n int, v float64) (any, error) {
	switch dt {
	case tensor.Float32:
		return fill(make([]float32, n), float32(v)), nil
	case tensor.Float64:
		return fill(make([]float64, n), v), nil
	case tensor.Float16:
		return fill(make([]uint16, n), tensor.Float64ToFloat16(v)), nil
	case tensor.BFloat16:
		return fill(make([]uint16, n), tensor.Float64ToBFloat16(v)), nil
	case tensor.Int8:
		return fill(make([]int8, n), int8(v)), nil
	case tensor.Int16:
		return fill(make([]int16, n), int16(v)), nil
	case tensor.Int32:
		return fill(make([]int32, n), int32(v)), nil
	case tensor.Int64:
		return fill(make([]int64, n), int64(v)), nil
	case tensor.Uint8:
		return fill(make([]uint8, n), uint8(v)), nil
	case tensor.Uint16:
		return fill(make([]uint16, n), uint16(v)), nil
	case tensor.Uint32:
		return fill(make([]uint32, n), uint32(v)), nil
	case tensor.Uint64:
		return fill(make([]uint64, n), uint64(v)), nil
	case tensor.Bool:
		return fill(make([]bool, n), v != 0), nil
	}
	return nil, fmt.Errorf("svc cannot make a first value of type %s", dt)
}

func fill[T any](s []T, v T) []T {
	for i := range s {
		s[i] = v
	}
	return s
}

// split returns the sizes of t's shape around axis: the product of the
// dimensions before it (outer), its size, and the product after (inner).
func split(shape []int64, axis int) (outer, size, inner int) {
	outer, inner = 1, 1
	for a, d := range shape {
		switch {
		case a < axis:
			outer *= int(d)
		case a > axis:
			inner *= int(d)
		}
	}
	return outer, int(shape[axis]), inner
}

// sameExcept reports whether two shapes are equal but for axis (-1: all).
func sameExcept(a, b []int64, axis int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if i != axis && a[i] != b[i] {
			return false
		}
	}
	return true
}

// concat joins tensors of one type, equal in shape but along axis, along
// axis.
func concat(ts []*tensor.Tensor, axis int) *tensor.Tensor {
	if len(ts) == 1 {
		return ts[0]
	}
	first := ts[0]
	shape := append([]int64(nil), first.Shape...)
	total := 0
	for _, t := range ts {
		total += int(t.Shape[axis])
	}
	shape[axis] = int64(total)
	outer, _, inner := split(shape, axis)
	out := reflect.MakeSlice(reflect.TypeOf(first.Data), outer*total*inner, outer*total*inner)
	for o := 0; o < outer; o++ {
		at := o * total * inner
		for _, t := range ts {
			n := int(t.Shape[axis]) * inner
			src := reflect.ValueOf(t.Data).Slice(o*n, (o+1)*n)
			reflect.Copy(out.Slice(at, at+n), src)
			at += n
		}
	}
	return &tensor.Tensor{DType: first.DType, Shape: shape, Data: out.Interface()}
}

// cut returns rows [from, to) of t along axis, as a tensor of its own.
func cut(t *tensor.Tensor, axis, from, to int) *tensor.Tensor {
	outer, size, inner := split(t.Shape, axis)
	rows := to - from
	shape := append([]int64(nil), t.Shape...)
	shape[axis] = int64(rows)
	src := reflect.ValueOf(t.Data)
	out := reflect.MakeSlice(src.Type(), outer*rows*inner, outer*rows*inner)
	for o := 0; o < outer; o++ {
		base := (o*size + from) * inner
		reflect.Copy(out.Slice(o*rows*inner, (o+1)*rows*inner), src.Slice(base, base+rows*inner))
	}
	return &tensor.Tensor{DType: t.DType, Shape: shape, Data: out.Interface()}
}

// equal reports whether two tensors hold the same type, shape and
// elements.
func equal(a, b *tensor.Tensor) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.DType == b.DType && sameExcept(a.Shape, b.Shape, -1) && reflect.DeepEqual(a.Data, b.Data)
}
