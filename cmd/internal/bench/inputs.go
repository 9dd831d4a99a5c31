package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// Info is the part of GET /info the load generator uses.
type Info struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Path    string  `json:"path"`
	Inputs  []Input `json:"inputs"`
	Outputs []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"outputs"`
}

// Input is one model input as GET /info describes it.
type Input struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Shape has -1 for dynamic dimensions; nil when the rank is unknown
	// or the input is not a tensor.
	Shape    []int64 `json:"shape"`
	Required bool    `json:"required"`
}

// MaxElements caps the elements of one generated input.
const MaxElements = 1 << 26

// Planned is one input the generator fills: its element type and the
// concrete shape it gets.
type Planned struct {
	Name  string  `json:"name"`
	Type  string  `json:"type"`
	Shape []int64 `json:"shape"`
	// DefaultedDims lists the dynamic dimensions, other than the batch
	// dimension, that were set to 1 for want of a --shape.
	DefaultedDims []int `json:"defaulted_dims,omitempty"`
	dtype         tensor.DType
}

// ParseShape parses a --shape value: NAME=D0,D1,… (NAME= for a rank-0
// input). Every dimension must be a positive integer.
func ParseShape(s string) (string, []int64, error) {
	name, dims, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", nil, fmt.Errorf("invalid --shape %q: want NAME=D0,D1,… (e.g. x=1,3,48,192)", s)
	}
	shape := []int64{}
	if strings.TrimSpace(dims) == "" {
		return name, shape, nil
	}
	for _, f := range strings.Split(dims, ",") {
		d, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || d < 1 {
			return "", nil, fmt.Errorf("invalid --shape %q: dimension %q is not a positive integer", s, f)
		}
		shape = append(shape, d)
	}
	return name, shape, nil
}

// PlanInputs decides the shape of every input the generator fills.
//
// An input named in shapes gets that shape (its rank and fixed dimensions
// must agree with the model). Otherwise fixed dimensions are kept, a
// dynamic first dimension becomes batch (the batch dimension), and every
// other dynamic dimension becomes 1. Optional inputs are left out (the
// model's default applies) unless shapes names them. A tensor input of
// unknown rank needs a shape; a non-tensor input cannot be generated.
func PlanInputs(inputs []Input, batch int64, shapes map[string][]int64) ([]Planned, error) {
	if batch < 1 {
		return nil, fmt.Errorf("invalid --batch %d: must be at least 1", batch)
	}
	known := map[string]bool{}
	for _, in := range inputs {
		known[in.Name] = true
	}
	for name := range shapes {
		if !known[name] {
			return nil, fmt.Errorf("--shape names %q, but the model's inputs are: %s", name, inputNames(inputs))
		}
	}
	var out []Planned
	batchUsed := false
	for _, in := range inputs {
		shape, given := shapes[in.Name]
		var defaulted []int
		if !in.Required && !given {
			continue
		}
		dt, ok := tensor.ParseDType(in.Type)
		if !ok {
			return nil, fmt.Errorf("input %q has type %s, which svc bench cannot generate; give a request body with --input FILE.json", in.Name, in.Type)
		}
		switch {
		case given && in.Shape != nil:
			if len(shape) != len(in.Shape) {
				return nil, fmt.Errorf("--shape %s=%s: the model's input has rank %d %s", in.Name, joinDims(shape), len(in.Shape), formatShape(in.Shape))
			}
			for i, d := range in.Shape {
				if d >= 0 && d != shape[i] {
					return nil, fmt.Errorf("--shape %s=%s: dimension %d is fixed to %d in the model %s", in.Name, joinDims(shape), i, d, formatShape(in.Shape))
				}
			}
		case given:
		case in.Shape == nil:
			return nil, fmt.Errorf("input %q has no known rank; give its shape with --shape %s=D0,D1,…", in.Name, in.Name)
		default:
			shape = make([]int64, len(in.Shape))
			for i, d := range in.Shape {
				switch {
				case d >= 0:
					shape[i] = d
				case i == 0:
					shape[i] = batch
					batchUsed = true
				default:
					shape[i] = 1
					defaulted = append(defaulted, i)
				}
			}
		}
		n := int64(1)
		for _, d := range shape {
			if d > MaxElements || n*d > MaxElements {
				return nil, fmt.Errorf("input %q: shape %s has more than %d elements", in.Name, formatShape(shape), MaxElements)
			}
			n *= d
		}
		out = append(out, Planned{Name: in.Name, Type: dt.String(), Shape: slices.Clone(shape), DefaultedDims: defaulted, dtype: dt})
	}
	if batch > 1 && !batchUsed {
		return nil, fmt.Errorf("--batch %d: no input without --shape has a dynamic first dimension", batch)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the model has no required inputs to generate; give a request body with --input FILE.json")
	}
	return out, nil
}

// Generate builds n request bodies of random values for the planned
// inputs, deterministically from seed: floats uniform in [0, 1), integers
// uniform in [0, 10), random booleans, strings of 3 to 8 lowercase
// letters; but a text model's inputs by their Hugging Face names get what
// such a model takes (sequenceValue). A rank-0 input is written as a bare
// value.
func Generate(plan []Planned, n int, seed uint64) [][]byte {
	return EncodeBodies(plan, GenerateTensors(plan, n, seed))
}

// GenerateTensors builds n sets of random input tensors for the planned
// inputs (in plan order), deterministically from seed, as Generate
// describes.
func GenerateTensors(plan []Planned, n int, seed uint64) [][]*tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([][]*tensor.Tensor, n)
	for i := range out {
		out[i] = make([]*tensor.Tensor, len(plan))
		for j, p := range plan {
			out[i][j] = randomTensor(r, p)
		}
	}
	return out
}

// EncodeBodies writes each set of input tensors (in plan order) as a
// /predict body.
func EncodeBodies(plan []Planned, tensors [][]*tensor.Tensor) [][]byte {
	bodies := make([][]byte, len(tensors))
	for i, ts := range tensors {
		b := []byte{'{'}
		for j, p := range plan {
			if j > 0 {
				b = append(b, ',')
			}
			name, _ := json.Marshal(p.Name)
			b = append(b, name...)
			b = append(b, ':')
			b = tensorjson.AppendJSON(b, ts[j])
		}
		bodies[i] = append(b, '}')
	}
	return bodies
}

// randomTensor fills a tensor of p's type and shape.
func randomTensor(r *rand.Rand, p Planned) *tensor.Tensor {
	n := 1
	for _, d := range p.Shape {
		n *= int(d)
	}
	t := &tensor.Tensor{DType: p.dtype, Shape: p.Shape}
	next := func() int { return r.IntN(10) }
	if v, ok := sequenceValue[p.Name]; ok {
		next = func() int { return v }
	}
	switch p.dtype {
	case tensor.Float32:
		t.Data = fill(n, func() float32 { return r.Float32() })
	case tensor.Float64:
		t.Data = fill(n, r.Float64)
	case tensor.Float16:
		t.Data = fill(n, func() uint16 { return tensor.Float32ToFloat16(r.Float32()) })
	case tensor.BFloat16:
		t.Data = fill(n, func() uint16 { return tensor.Float32ToBFloat16(r.Float32()) })
	case tensor.Int8:
		t.Data = fill(n, func() int8 { return int8(next()) })
	case tensor.Int16:
		t.Data = fill(n, func() int16 { return int16(next()) })
	case tensor.Int32:
		t.Data = fill(n, func() int32 { return int32(next()) })
	case tensor.Int64:
		t.Data = fill(n, func() int64 { return int64(next()) })
	case tensor.Uint8:
		t.Data = fill(n, func() uint8 { return uint8(next()) })
	case tensor.Uint16:
		t.Data = fill(n, func() uint16 { return uint16(next()) })
	case tensor.Uint32:
		t.Data = fill(n, func() uint32 { return uint32(next()) })
	case tensor.Uint64:
		t.Data = fill(n, func() uint64 { return uint64(next()) })
	case tensor.Bool:
		t.Data = fill(n, func() bool { return r.IntN(2) == 1 })
	case tensor.String:
		t.Data = fill(n, func() string { return word(r) })
	}
	return t
}

// sequenceValue is the one value of a text model's integer inputs that
// are not token ids: every token attended to, every token of the first
// segment. Random token types would be refused by a model with two
// (400: past its type_vocab_size).
var sequenceValue = map[string]int{"attention_mask": 1, "token_type_ids": 0}

func fill[T any](n int, f func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f()
	}
	return s
}

// word is a random lowercase word of 3 to 8 letters.
func word(r *rand.Rand) string {
	b := make([]byte, 3+r.IntN(6))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func inputNames(inputs []Input) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = "'" + in.Name + "'"
	}
	return strings.Join(names, ", ")
}

// formatShape writes a shape as [1, 3, -1, -1].
func formatShape(s []int64) string { return tensor.FormatShape(s) }

func joinDims(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, ",")
}
