package stream

import (
	"errors"
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// binary makes one step's inputs from a binary message: the streamed
// input's elements, little-endian, in the resolved shape; the other inputs
// take their query values.
func (p *plan) binary(data []byte) ([]*tensor.Tensor, error) {
	if p.binErr != nil {
		return nil, p.binErr
	}
	s := p.specs[p.stream]
	shape, err := p.fit(len(data))
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	v, err := tensor.DecodeRaw(s.DType, n, data, 0)
	if err != nil {
		return nil, fmt.Errorf("input '%s': %w", s.Name, err)
	}
	in := make([]*tensor.Tensor, len(p.specs))
	copy(in, p.fixed)
	in[p.stream] = &tensor.Tensor{DType: s.DType, Shape: shape, Data: v}
	return in, nil
}

// fit is the shape of a binary message of size bytes: the resolved shape
// with its -1 (if any) given by the length. A length that does not fit is
// an error naming the input, its type and shape, the bytes received and
// the lengths that fit.
func (p *plan) fit(size int) ([]int64, error) {
	s := p.specs[p.stream]
	es := int64(s.DType.Size())
	// row: the elements of the fixed axes; newPlan saw that row*es is
	// positive and at most a message's limit.
	row, open := int64(1), -1
	for i, d := range p.shape {
		if d < 0 {
			open = i
			continue
		}
		row *= d
	}
	shape := append([]int64{}, p.shape...)
	got := int64(size)
	if open < 0 {
		if got == row*es {
			return shape, nil
		}
		return nil, p.misfit(size, fmt.Sprintf("exactly %d bytes (%d %s)", row*es, row, s.DType))
	}
	if got > 0 && row > 0 && got%(row*es) == 0 {
		shape[open] = got / (row * es)
		return shape, nil
	}
	if row == 1 {
		return nil, p.misfit(size, fmt.Sprintf("a positive multiple of %d bytes (one %s each)", es, s.DType))
	}
	return nil, p.misfit(size, fmt.Sprintf("a positive multiple of %d bytes (%d %s for each step of axis %d)", row*es, row, s.DType, open))
}

func (p *plan) misfit(size int, fits string) error {
	s := p.specs[p.stream]
	return fmt.Errorf("input '%s' is %s, shape %s: a binary message of %d bytes does not fit; it takes %s, little-endian",
		s.Name, s.DType, tensor.FormatShape(p.shape), size, fits)
}

// stepForm is how a JSON step is written, for its errors.
const stepForm = `{"inputs": {"NAME": {"shape": [...], "data": [...]}}}`

// text makes one step's inputs from a JSON text message:
// {"inputs": {NAME: {"shape": [...], "data": [...]}}}, data flat in
// row-major order (or nested as the shape; without "shape", the nesting
// gives it). Inputs not named take their query values.
func (p *plan) text(body []byte) ([]*tensor.Tensor, error) {
	d := tensorjson.NewDecoder(body, len(p.specs))
	defer d.Release()
	given := make([]*tensor.Tensor, len(p.specs))
	seen := false
	err := d.Object(func(key []byte) error {
		if string(key) != "inputs" || seen {
			what := "has the key '" + string(key) + "'"
			if seen {
				what = `has "inputs" twice`
			}
			return fmt.Errorf("a JSON step %s: send %s", what, stepForm)
		}
		seen = true
		if c, _ := d.Peek(); c != '{' {
			return fmt.Errorf(`a JSON step's "inputs" is an object of the inputs by name: send %s`, stepForm)
		}
		d.Advance(1)
		return d.Members(func(name []byte) error { return p.textInput(d, body, string(name), given) })
	})
	if errors.Is(err, tensorjson.ErrNotObject) {
		return nil, fmt.Errorf("a JSON step is an object: send %s", stepForm)
	}
	if err != nil {
		return nil, err
	}
	for i, s := range p.specs {
		if given[i] != nil || p.state[i] {
			continue
		}
		given[i] = p.fixed[i]
		if given[i] == nil && s.Required {
			return nil, fmt.Errorf(`input '%s' needs a value: name it in the step's "inputs"`, s.Name)
		}
	}
	return given, nil
}

// shapeSpec decodes a JSON step's "shape".
var shapeSpec = tensor.Spec{Name: "shape", DType: tensor.Int64, Shape: []int64{-1}}

// textInput decodes the input name's {"shape", "data"} at d's position
// into given.
func (p *plan) textInput(d tensorjson.Decoder, body []byte, name string, given []*tensor.Tensor) error {
	i := p.index(name)
	switch {
	case i < 0:
		return fmt.Errorf("the model has no input '%s' (inputs: %s)", transport.Quote(name), p.names())
	case p.state[i]:
		return fmt.Errorf("svc keeps state '%s': a step gives the inputs %s", name, p.names())
	case given[i] != nil:
		return fmt.Errorf("input '%s' is given twice", name)
	}
	if c, _ := d.Peek(); c != '{' {
		return fmt.Errorf(`input '%s' is an object: {"shape": [...], "data": [...]}`, name)
	}
	d.Advance(1)
	var shape []int64
	start, end := -1, -1
	err := d.Members(func(key []byte) error {
		switch string(key) {
		case "shape":
			var err error
			shape, err = stepShape(d, name)
			return err
		case "data":
			start = d.Pos()
			if err := d.SkipValue(); err != nil {
				return err
			}
			end = d.Pos()
		default:
			return fmt.Errorf(`input '%s' has the key '%s': it takes "shape" and "data"`, name, transport.Quote(string(key)))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if start < 0 {
		return fmt.Errorf(`input '%s' has no "data"`, name)
	}
	sub := tensorjson.NewDecoder(body[start:end], 1)
	defer sub.Release()
	spec := p.specs[i]
	var t *tensor.Tensor
	if shape != nil {
		t, err = sub.Flat(&spec, shape)
	} else {
		t, err = sub.Value(&spec)
	}
	if err != nil {
		return err
	}
	given[i] = t
	return nil
}

// stepShape decodes the "shape" of input name at d's position.
func stepShape(d tensorjson.Decoder, name string) ([]int64, error) {
	bad := fmt.Errorf(`the "shape" of input '%s' is an array of non-negative integers`, name)
	if c, _ := d.Peek(); c != '[' {
		if err := d.SkipValue(); err != nil {
			return nil, err
		}
		return nil, bad
	}
	t, err := d.Value(&shapeSpec)
	if err != nil {
		var je *tensorjson.Error
		if errors.As(err, &je) && je.Input == "" {
			return nil, err // malformed JSON
		}
		return nil, bad
	}
	shape := t.Data.([]int64)
	for _, n := range shape {
		if n < 0 {
			return nil, bad
		}
	}
	return shape, nil
}

func (p *plan) index(name string) int {
	for i, s := range p.specs {
		if s.Name == name {
			return i
		}
	}
	return -1
}
