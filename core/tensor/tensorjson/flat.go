package tensorjson

import (
	"fmt"
	"math"
	"slices"

	"github.com/svc-dev/svc/core/tensor"
)

// Flat parses the value at Pos as the data of a tensor whose shape the
// caller already knows (protocols that send the shape beside the data, such
// as the Open Inference Protocol), and moves past it. The data is either a
// flat array of every element in row-major order, or arrays nested exactly
// as shape; a tensor of one element may also be a bare value. The returned
// tensor has the given shape.
//
// shape must have no negative dimension, and must fit spec.Shape (rank and
// fixed dimensions; a nil spec.Shape accepts any), with the messages of
// Value. Element errors are those of Value; in flat data the position is the
// flat index. A count that does not match is "Invalid input for '<name>':
// shape [2, 4] needs 8 elements, got 6", and nesting that is neither flat
// nor the shape is "...: data nested as [4, 2] does not match shape [2, 4]".
// spec.DType must be valid.
func (x Decoder) Flat(spec *tensor.Spec, shape []int64) (*tensor.Tensor, error) {
	if !spec.DType.Valid() {
		return nil, fmt.Errorf("tensorjson: input %q has unsupported dtype %v", spec.Name, spec.DType)
	}
	n, err := ElementCount(spec.Name, shape)
	if err != nil {
		return nil, err
	}
	if spec.Shape != nil {
		if err := checkShape(spec, shape); err != nil {
			return nil, err
		}
	}
	return x.d.flat(spec, shape, n)
}

// ElementCount is the number of elements of a tensor of shape: an *Error
// naming the input when a dimension is negative or the count does not fit
// in an int64.
func ElementCount(name string, shape []int64) (int64, *Error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, &Error{Input: name, Message: fmt.Sprintf("Invalid shape for '%s': %s has a negative dimension", name, formatShape(shape))}
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, &Error{Input: name, Message: fmt.Sprintf("Invalid shape for '%s': %s has too many elements", name, formatShape(shape))}
		}
		n *= d
	}
	return n, nil
}

// checkShape checks got against the rank and fixed dimensions of s.Shape.
func checkShape(s *tensor.Spec, got []int64) *Error {
	r := len(s.Shape)
	if len(got) != r {
		return &Error{Input: s.Name, Message: fmt.Sprintf("Invalid shape for '%s': expected rank %d %s, got rank %d %s",
			s.Name, r, formatShape(s.Shape), len(got), formatShape(got))}
	}
	for i, want := range s.Shape {
		if want >= 0 && got[i] != want {
			return &Error{Input: s.Name, Message: fmt.Sprintf("Invalid shape for '%s': expected %s, got %s",
				s.Name, formatShape(s.Shape), formatShape(got))}
		}
	}
	return nil
}

// flat parses the data of a tensor of shape (n elements) at d.pos.
func (d *decoder) flat(s *tensor.Spec, shape []int64, n int64) (*tensor.Tensor, error) {
	d.spec, d.dt = s, s.DType
	if d.pos >= len(d.b) {
		return nil, syntaxErr(len(d.b), "unexpected end of input")
	}
	if c := d.b[d.pos]; c != '[' {
		if _, err := d.kindAt(); err != nil {
			return nil, err
		}
		if n != 1 || !valueKindMatches(c, d.dt) {
			return nil, d.typeErr("array")
		}
		d.resetScratch()
		if err := d.elem(0); err != nil {
			return nil, err
		}
		return d.tensor(shape), nil
	}
	if err := d.parseArray(); err != nil {
		return nil, err
	}
	got := d.dims[:d.leaf]
	if len(got) == 1 && got[0] == n || slices.Equal(got, shape) {
		return d.tensor(shape), nil
	}
	if len(got) == 1 {
		return nil, d.inputErr(fmt.Sprintf("shape %s needs %d elements, got %d", formatShape(shape), n, got[0]))
	}
	return nil, d.inputErr(fmt.Sprintf("data nested as %s does not match shape %s", formatShape(got), formatShape(shape)))
}
