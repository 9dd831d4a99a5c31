package stream

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// Query keys that are not the values of inputs.
const (
	queryInput = "input"
	queryShape = "shape"
)

// plan is how a connection's messages become the model's inputs: the
// streamed input takes each binary message, in the shape resolved once;
// JSON text steps name any inputs; the others take their query values.
type plan struct {
	specs []tensor.Spec
	state []bool           // by input
	fixed []*tensor.Tensor // the query's values, by input; nil for none
	// stream is the input binary messages go to (-1: none: every input
	// has a query value).
	stream int
	// shape is the streamed input's shape: at most one -1, the axis that a
	// message's length gives.
	shape []int64
	// binErr answers every binary message when they cannot be steps (no
	// streamed input, one of strings, another required input without a
	// value).
	binErr error
}

// newPlan resolves the query against the model's inputs: ?input=NAME
// picks the streamed input (by default the first input that is no state
// and has no query value, a float one if there is one); ?shape= the shape
// of its messages where the model leaves it open; every other NAME=VALUE
// is a one-element value of that input. Errors are the query's mistakes,
// answered 400 before the upgrade: a key that names nothing a connection
// takes, or a state, a key given twice, a value or a shape that does not
// fit the input, a shape that no binary message of at most maxBytes
// (limits.max_body_size) can fit.
func newPlan(specs []tensor.Spec, l *seq.Layout, q map[string][]string, maxBytes int64) (*plan, error) {
	p := &plan{specs: specs, state: make([]bool, len(specs)), fixed: make([]*tensor.Tensor, len(specs)), stream: -1}
	for i := range specs {
		p.state[i] = l.StateInput(i)
	}
	if err := p.checkQuery(q); err != nil {
		return nil, err
	}
	for i, s := range specs {
		v, ok := q[s.Name]
		if !ok || p.state[i] || s.Name == queryInput || s.Name == queryShape {
			continue
		}
		t, err := scalar(s, v[0])
		if err != nil {
			return nil, err
		}
		p.fixed[i] = t
	}
	if err := p.pickStream(q); err != nil {
		return nil, err
	}
	for i, s := range specs {
		if i != p.stream && !p.state[i] && p.fixed[i] == nil && s.Required && urlValue(s) {
			return nil, fmt.Errorf("input '%s' needs a value: add ?%s=VALUE to the URL", s.Name, s.Name)
		}
	}
	if p.stream < 0 {
		p.binErr = errors.New("binary messages have no input to go to: the URL gives every input a value; send JSON text steps")
		return p, nil
	}
	s := specs[p.stream]
	if s.DType == tensor.String || s.DType.Size() == 0 {
		p.binErr = fmt.Errorf("input '%s' is %s: binary messages carry numbers or booleans; send JSON text steps", s.Name, s.DType)
		return p, nil
	}
	for i, o := range specs {
		if i != p.stream && !p.state[i] && p.fixed[i] == nil && o.Required {
			p.binErr = fmt.Errorf("input '%s' needs a value: binary messages give only '%s'; send JSON text steps that name '%s' too", o.Name, s.Name, o.Name)
			break
		}
	}
	var given []string
	if v, ok := q[queryShape]; ok {
		given = v
	}
	shape, err := resolveShape(s, given)
	if err != nil {
		return nil, err
	}
	p.shape = shape
	if why := fits(s, shape, maxBytes); why != "" {
		if given != nil {
			return nil, fmt.Errorf("shape=%s: %s; input '%s' is %s", transport.Quote(given[0]), why, s.Name, describe(s))
		}
		if p.binErr == nil {
			p.binErr = fmt.Errorf("input '%s' is %s: %s; send JSON text steps", s.Name, describe(s), why)
		}
	}
	return p, nil
}

// fits says why no binary message of input s in shape (-1: the axis its
// length gives) can be at most maxBytes long, or "": an axis of 0 leaves
// no element to send, and the fixed axes' elements may take more bytes
// than a message may hold (or than an int64 counts).
func fits(s tensor.Spec, shape []int64, maxBytes int64) string {
	if maxBytes <= 0 {
		maxBytes = math.MaxInt64
	}
	least := int64(s.DType.Size()) // the bytes of the shortest message
	for i, d := range shape {
		switch {
		case d == 0:
			return fmt.Sprintf("axis %d is 0, so a binary message holds no element and none can fit", i)
		case d > 0 && least > maxBytes/d:
			return fmt.Sprintf("a binary message of that shape takes more than %d bytes, the most that limits.max_body_size allows a message", maxBytes)
		case d > 0:
			least *= d
		}
	}
	return ""
}

// checkQuery refuses the keys of the query that a connection does not
// take (a state's name among them: svc keeps the state) and a key given
// more than once.
func (p *plan) checkQuery(q map[string][]string) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := p.index(k)
		switch {
		case k == queryInput || k == queryShape:
		case i >= 0 && p.state[i]:
			return fmt.Errorf("%s: svc keeps state '%s', which the URL cannot give; the URL takes %s", k, k, p.keys())
		case i < 0:
			return fmt.Errorf("the URL has the key '%s', which a stream does not take; the URL takes %s", transport.Quote(k), p.keys())
		}
		if n := len(q[k]); n > 1 {
			return fmt.Errorf("the URL gives '%s' %d times; give it once", k, n)
		}
	}
	return nil
}

// keys lists the query keys a connection takes.
func (p *plan) keys() string {
	k := []string{queryInput + "=NAME", queryShape + "=D,D,..."}
	for i, s := range p.specs {
		if !p.state[i] && s.Name != queryInput && s.Name != queryShape {
			k = append(k, s.Name+"=VALUE")
		}
	}
	return strings.Join(k, ", ")
}

// pickStream sets the streamed input: the one ?input= names, or the first
// input that is no state and has no query value, preferring a float one.
func (p *plan) pickStream(q map[string][]string) error {
	if v, ok := q[queryInput]; ok {
		want := v[0]
		for i, s := range p.specs {
			if s.Name != want {
				continue
			}
			if p.state[i] {
				return fmt.Errorf("input=%s: svc keeps state '%s'; stream one of the inputs %s", s.Name, s.Name, p.names())
			}
			if p.fixed[i] != nil {
				return fmt.Errorf("input=%s: '%s' also has a value in the URL; give one or the other", s.Name, s.Name)
			}
			p.stream = i
			return nil
		}
		return fmt.Errorf("input=%s: the model has no input '%s' (inputs: %s)", transport.Quote(want), transport.Quote(want), p.names())
	}
	for i, s := range p.specs {
		if p.state[i] || p.fixed[i] != nil {
			continue
		}
		if isFloat(s.DType) {
			p.stream = i
			return nil
		}
		if p.stream < 0 {
			p.stream = i
		}
	}
	return nil
}

// names lists the inputs a connection can give (all but the states).
func (p *plan) names() string {
	var n []string
	for i, s := range p.specs {
		if !p.state[i] {
			n = append(n, s.Name)
		}
	}
	return strings.Join(n, ", ")
}

func isFloat(d tensor.DType) bool {
	return d == tensor.Float32 || d == tensor.Float64 || d == tensor.Float16 || d == tensor.BFloat16
}

// urlValue reports whether an input of this spec can take a value from the
// URL: it holds one element (a dynamic leading axis, the batch, is 1).
func urlValue(s tensor.Spec) bool {
	if s.Shape == nil {
		return false
	}
	for i, d := range s.Shape {
		if d > 1 || d == 0 || (d < 0 && i > 0) {
			return false
		}
	}
	return true
}

// resolveShape is the shape of input s's binary messages: the declared
// dims, with a dynamic leading (batch) axis of rank ≥ 2 set to 1; one
// dynamic axis left is given by each message's length (-1); several need
// ?shape= (given: the query's values), which may leave one -1 too.
func resolveShape(s tensor.Spec, given []string) ([]int64, error) {
	if given != nil {
		return parseShape(s, given[0])
	}
	desc := describe(s)
	if s.Shape == nil {
		return nil, fmt.Errorf("input '%s' is %s of unknown rank: give the shape of each binary message with ?shape=, such as ?shape=1,-1 (-1: the axis the message's length gives)", s.Name, s.DType)
	}
	shape := append([]int64{}, s.Shape...)
	besides := ""
	if len(shape) >= 2 && shape[0] < 0 {
		shape[0], besides = 1, " besides its batch"
	}
	open := 0
	for i, d := range shape {
		if d < 0 {
			shape[i] = -1
			open++
		}
	}
	if open > 1 {
		example := append([]int64{}, shape...)
		for i, d := range example {
			if d < 0 {
				example[i] = 4
			}
		}
		example[len(example)-1] = -1
		return nil, fmt.Errorf("input '%s' is %s, with %d dynamic axes%s: give the shape of each binary message with ?shape=, such as ?shape=%s (-1: the axis the message's length gives)",
			s.Name, desc, open, besides, joinShape(example))
	}
	return shape, nil
}

// parseShape reads ?shape=D,D,... for input s: non-negative sizes and at
// most one -1, of s's rank and matching its fixed dims.
func parseShape(s tensor.Spec, v string) ([]int64, error) {
	bad := func(why string) error {
		return fmt.Errorf("shape=%s: %s; input '%s' is %s", transport.Quote(v), why, s.Name, describe(s))
	}
	var shape []int64
	open := 0
	if v != "" {
		for f := range strings.SplitSeq(v, ",") {
			d, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || d < -1 || d > math.MaxInt32 {
				return nil, bad("'" + transport.Quote(f) + "' is not a size (a non-negative integer, or -1 for the axis the message's length gives)")
			}
			if d == -1 {
				open++
			}
			shape = append(shape, d)
		}
	}
	if open > 1 {
		return nil, bad("only one axis can be -1")
	}
	if s.Shape != nil {
		if len(shape) != len(s.Shape) {
			return nil, bad(fmt.Sprintf("rank %d, the input's is %d", len(shape), len(s.Shape)))
		}
		for i, d := range s.Shape {
			if d >= 0 && shape[i] != d {
				return nil, bad(fmt.Sprintf("axis %d is %d, the input's is %d", i, shape[i], d))
			}
		}
	}
	return shape, nil
}

// describe writes an input's type and declared shape for messages:
// "float32 [-1, -1]" (-1: dynamic), "int64 of unknown rank".
func describe(s tensor.Spec) string {
	if s.Shape == nil {
		return s.DType.String() + " of unknown rank"
	}
	return s.DType.String() + " " + tensor.FormatShape(s.Shape)
}

func joinShape(s []int64) string {
	f := make([]string, len(s))
	for i, d := range s {
		f[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(f, ",")
}

// scalar parses a query value for input s, which must take one element.
func scalar(s tensor.Spec, v string) (*tensor.Tensor, error) {
	shape := make([]int64, len(s.Shape))
	for i, d := range s.Shape {
		if d > 1 {
			return nil, fmt.Errorf("input '%s' has shape %s: only inputs of one element take a value from the URL", s.Name, tensor.FormatShape(s.Shape))
		}
		shape[i] = 1
	}
	bad := fmt.Errorf("input '%s' is %s: '%s' is not one", s.Name, s.DType, transport.Quote(v))
	t := &tensor.Tensor{DType: s.DType, Shape: shape}
	switch s.DType {
	case tensor.Int64, tensor.Int32:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (s.DType == tensor.Int32 && (n < math.MinInt32 || n > math.MaxInt32)) {
			return nil, bad
		}
		if s.DType == tensor.Int64 {
			t.Data = []int64{n}
		} else {
			t.Data = []int32{int32(n)}
		}
	case tensor.Float32, tensor.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, bad
		}
		if s.DType == tensor.Float32 {
			t.Data = []float32{float32(f)}
		} else {
			t.Data = []float64{f}
		}
	default:
		return nil, fmt.Errorf("input '%s' is %s: svc takes int32, int64, float32 or float64 values from the URL", s.Name, s.DType)
	}
	return t, nil
}
