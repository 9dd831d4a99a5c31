package decode

import (
	"fmt"
	"math"

	"github.com/svc-dev/svc/core/tensor"
)

// floats reads a numeric tensor's elements as float64.
type floats struct {
	dtype tensor.DType
	data  any
	n     int
}

// newFloats checks that t holds numbers, with Data of the Go type that its
// DType promises, and that Data's length is the product of its shape.
func newFloats(t *tensor.Tensor) (floats, error) {
	if t == nil {
		return floats{}, fmt.Errorf("no output tensor")
	}
	f := floats{dtype: t.DType, data: t.Data, n: -1}
	switch t.DType {
	case tensor.Float32:
		f.n = lenOf[float32](t.Data)
	case tensor.Float64:
		f.n = lenOf[float64](t.Data)
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		f.n = lenOf[uint16](t.Data)
	case tensor.Int8:
		f.n = lenOf[int8](t.Data)
	case tensor.Int16:
		f.n = lenOf[int16](t.Data)
	case tensor.Int32:
		f.n = lenOf[int32](t.Data)
	case tensor.Int64:
		f.n = lenOf[int64](t.Data)
	case tensor.Uint8:
		f.n = lenOf[uint8](t.Data)
	case tensor.Uint32:
		f.n = lenOf[uint32](t.Data)
	case tensor.Uint64:
		f.n = lenOf[uint64](t.Data)
	default:
		return floats{}, fmt.Errorf("output of type %s holds no scores", t.DType)
	}
	if f.n < 0 {
		return floats{}, fmt.Errorf("output of type %s holds %T data", t.DType, t.Data)
	}
	want, err := elements(t.Shape)
	if err != nil {
		return floats{}, err
	}
	if want != int64(f.n) {
		return floats{}, fmt.Errorf("output of shape %s holds %d values, want %d", tensor.FormatShape(t.Shape), f.n, want)
	}
	return f, nil
}

// lenOf is the length of data when it is a []T, and -1 otherwise.
func lenOf[T any](data any) int {
	if d, ok := data.([]T); ok {
		return len(d)
	}
	return -1
}

// elements is the number of elements of a tensor of the given shape.
func elements(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("output shape %s has a negative dimension", tensor.FormatShape(shape))
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("output shape %s is too large", tensor.FormatShape(shape))
		}
		n *= d
	}
	return n, nil
}

// row sets dst to the len(dst) elements from off; the caller has checked
// that they are within the data.
func (f floats) row(dst []float64, off int) {
	switch f.dtype {
	case tensor.Float32:
		convert(dst, f.data.([]float32)[off:])
	case tensor.Float64:
		copy(dst, f.data.([]float64)[off:])
	case tensor.Float16:
		for i, h := range f.data.([]uint16)[off : off+len(dst)] {
			dst[i] = float64(tensor.Float16ToFloat32(h))
		}
	case tensor.BFloat16:
		for i, h := range f.data.([]uint16)[off : off+len(dst)] {
			dst[i] = float64(tensor.BFloat16ToFloat32(h))
		}
	case tensor.Uint16:
		convert(dst, f.data.([]uint16)[off:])
	case tensor.Int8:
		convert(dst, f.data.([]int8)[off:])
	case tensor.Int16:
		convert(dst, f.data.([]int16)[off:])
	case tensor.Int32:
		convert(dst, f.data.([]int32)[off:])
	case tensor.Int64:
		convert(dst, f.data.([]int64)[off:])
	case tensor.Uint8:
		convert(dst, f.data.([]uint8)[off:])
	case tensor.Uint32:
		convert(dst, f.data.([]uint32)[off:])
	case tensor.Uint64:
		convert(dst, f.data.([]uint64)[off:])
	}
}

// convert sets dst[i] to float64(src[i]) for each i of dst.
func convert[T float32 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](dst []float64, src []T) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// softmax replaces the numbers of v by their softmax, computed after
// subtracting their maximum so that large values do not overflow. NaN
// entries stay NaN and take no part. When the maximum is ±Inf, the entries
// equal to it share 1 evenly and the others get 0.
func softmax(v []float64) {
	m := math.NaN()
	for _, x := range v {
		if x > m || m != m && x == x {
			m = x
		}
	}
	if m != m {
		return // all NaN
	}
	if math.IsInf(m, 0) {
		count := 0
		for _, x := range v {
			if x == m {
				count++
			}
		}
		share := 1 / float64(count)
		for i, x := range v {
			switch {
			case x == m:
				v[i] = share
			case x == x:
				v[i] = 0
			}
		}
		return
	}
	sum := 0.0
	for i, x := range v {
		if x == x {
			e := math.Exp(x - m)
			v[i] = e
			sum += e
		}
	}
	for i := range v {
		v[i] /= sum // NaN stays NaN
	}
}

// sigmoid applies the logistic function to each value, 1/(1+e^-x),
// computed so that neither tail overflows; NaN stays NaN.
func sigmoid(v []float64) {
	for i, x := range v {
		if x >= 0 {
			v[i] = 1 / (1 + math.Exp(-x))
		} else {
			e := math.Exp(x)
			v[i] = e / (1 + e)
		}
	}
}
