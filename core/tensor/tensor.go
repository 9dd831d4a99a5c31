package tensor

// Tensor is a dense, row-major tensor.
//
// Data holds the elements and is, by DType:
//
//	Float32           []float32
//	Float64           []float64
//	Float16, BFloat16 []uint16 (IEEE half / bfloat16 bit patterns)
//	Int8 … Int64      []int8, []int16, []int32, []int64
//	Uint8 … Uint64    []uint8, []uint16, []uint32, []uint64
//	Bool              []bool
//	String            []string
//
// A rank-0 (scalar) tensor has an empty, non-nil Shape and one element.
type Tensor struct {
	DType DType
	Shape []int64
	Data  any
}

// Len is the number of elements in Data (0 when Data is nil or of an
// unsupported type).
func (t *Tensor) Len() int {
	if t == nil {
		return 0
	}
	switch d := t.Data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []int8:
		return len(d)
	case []int16:
		return len(d)
	case []int32:
		return len(d)
	case []int64:
		return len(d)
	case []uint8:
		return len(d)
	case []uint16:
		return len(d)
	case []uint32:
		return len(d)
	case []uint64:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	}
	return 0
}

// Spec is what one model input accepts.
type Spec struct {
	Name  string
	DType DType
	// Shape has -1 (any negative value) for a dynamic dimension. A nil Shape
	// means the rank is unknown and any nesting is accepted; an empty,
	// non-nil Shape means a scalar.
	Shape    []int64
	Required bool
}

// SmallestShape is the spec's shape with every dynamic dimension 1, and the
// number of elements a tensor of that shape holds (a made-up input such as a
// warm-up's). A nil Shape gives an empty shape (a scalar).
func (s Spec) SmallestShape() ([]int64, int) {
	shape := make([]int64, len(s.Shape))
	n := 1
	for i, d := range s.Shape {
		if d < 0 {
			d = 1
		}
		shape[i] = d
		n *= int(d)
	}
	return shape, n
}

// Element returns element i of t's data as a rank-0 tensor sharing t's
// data.
func (t *Tensor) Element(i int) *Tensor {
	e := &Tensor{DType: t.DType, Shape: []int64{}}
	switch d := t.Data.(type) {
	case []float32:
		e.Data = d[i : i+1]
	case []float64:
		e.Data = d[i : i+1]
	case []int8:
		e.Data = d[i : i+1]
	case []int16:
		e.Data = d[i : i+1]
	case []int32:
		e.Data = d[i : i+1]
	case []int64:
		e.Data = d[i : i+1]
	case []uint8:
		e.Data = d[i : i+1]
	case []uint16:
		e.Data = d[i : i+1]
	case []uint32:
		e.Data = d[i : i+1]
	case []uint64:
		e.Data = d[i : i+1]
	case []bool:
		e.Data = d[i : i+1]
	case []string:
		e.Data = d[i : i+1]
	}
	return e
}
