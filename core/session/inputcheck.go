package session

import (
	"strconv"

	"github.com/svc-dev/svc/core"

	"github.com/svc-dev/svc/core/tensor"
)

// dimCheck holds what checkInputs needs of the model's inputs: the
// symbolic name of each dimension, in Specs order, and whether the model
// has a batch dimension (Batchable).
type dimCheck struct {
	inputs  []string
	names   [][]string
	batched bool
}

func newDimCheck(inputs []core.InputSpec, batched bool) dimCheck {
	c := dimCheck{inputs: make([]string, len(inputs)), names: make([][]string, len(inputs)), batched: batched}
	for i, in := range inputs {
		c.inputs[i], c.names[i] = in.Name, in.DimNames
	}
	return c
}

// check refuses what ONNX Runtime would run on anyway but cannot mean
// anything: inputs that disagree on the size of a dimension the model names
// the same (ONNX's dim_param: the same name is the same size everywhere),
// and an empty batch (0 items along the batch dimension of a Batchable
// model, where there is nothing to infer). Dimensions a model declares 0,
// or that are not a shared batch dimension, may be 0. Nil entries (inputs
// left to their default) and tensors of another rank than declared (the
// decoders refuse those first) are skipped.
func (c dimCheck) check(inputs []*tensor.Tensor) *core.InputError {
	if len(inputs) != len(c.names) {
		return nil
	}
	type seen struct {
		name  string
		size  int64
		input int
	}
	var buf [8]seen
	first := buf[:0]
	for i, t := range inputs {
		names := c.names[i]
		if t == nil || len(names) == 0 || len(t.Shape) != len(names) {
			continue
		}
		for axis, name := range names {
			if name == "" {
				continue
			}
			size := t.Shape[axis]
			if c.batched && axis == 0 && size == 0 {
				in := c.inputs[i]
				return &core.InputError{Input: in, Message: "Empty batch for '" + in + "': send at least one item"}
			}
			k := 0
			for k < len(first) && first[k].name != name {
				k++
			}
			if k == len(first) {
				first = append(first, seen{name, size, i})
				continue
			}
			if s := first[k]; s.size != size {
				in, other := c.inputs[i], c.inputs[s.input]
				return &core.InputError{Input: in, Message: "Invalid shape for '" + in + "': dimension '" + name + "' is " +
					strconv.FormatInt(size, 10) + " here but " + strconv.FormatInt(s.size, 10) + " in '" + other + "'"}
			}
		}
	}
	return nil
}
