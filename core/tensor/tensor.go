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

// Error is returned by DecodeRequest for every client mistake. Message is
// meant to be shown to the client verbatim (as {"detail": Message}, status 400).
// Input names the input concerned; it is empty for errors about the body as
// a whole (malformed JSON, not an object).
type Error struct {
	Input   string
	Message string
}

func (e *Error) Error() string { return e.Message }
