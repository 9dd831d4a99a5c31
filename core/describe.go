package core

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

// description is what svc knows about a model file before serving it.
type description struct {
	inputs  []InputSpec
	outputs []OutputSpec
	// defaults parallels inputs: the default value of optional inputs.
	defaults      []*tensor.Tensor
	externalFiles []string
}

// describe reads the model's inputs and outputs through ONNX Runtime.
func describe(file string) (*description, error) {
	ins, outs, err := ort.GetInputOutputInfo(file)
	if err != nil {
		return nil, cleanORTError(err)
	}
	d := &description{}
	for _, in := range ins {
		spec := InputSpec{Name: in.Name, Required: true}
		spec.Kind, spec.Type, spec.Shape = kindTypeShape(in)
		if spec.Kind == KindTensor && dtypeOf(in.DataType) == tensor.Invalid {
			return nil, fmt.Errorf("input %q has element type %v, which svc does not support", in.Name, in.DataType)
		}
		if spec.Kind != KindTensor {
			return nil, fmt.Errorf("input %q is a %s; svc serves tensor inputs only", in.Name, spec.Kind)
		}
		d.inputs = append(d.inputs, spec)
		d.defaults = append(d.defaults, nil)
	}
	for _, out := range outs {
		spec := OutputSpec{Name: out.Name}
		spec.Kind, spec.Type, spec.Shape = kindTypeShape(out)
		d.outputs = append(d.outputs, spec)
	}
	return d, nil
}

func kindTypeShape(io ort.InputOutputInfo) (ValueKind, string, []int64) {
	switch io.OrtValueType {
	case ort.ONNXTypeTensor:
		name := dtypeOf(io.DataType).String()
		if dtypeOf(io.DataType) == tensor.Invalid {
			name = io.DataType.String()
		}
		shape := []int64(io.Dimensions)
		if shape == nil {
			shape = []int64{}
		}
		return KindTensor, name, shape
	case ort.ONNXTypeSequence:
		return KindSequence, "sequence", nil
	case ort.ONNXTypeMap:
		return KindMap, "map", nil
	}
	return KindOther, io.OrtValueType.String(), nil
}

// planOutputs works out, for float16 outputs, how to size them from the
// inputs' dimensions before a run.
func planOutputs(inputs []InputSpec, outputs []OutputSpec) []outputPlan {
	plans := make([]outputPlan, len(outputs))
	for i, o := range outputs {
		plans[i].spec = o
		if o.Kind != KindTensor {
			continue
		}
		dt, _ := tensor.ParseDType(o.Type)
		if dt != tensor.Float16 && dt != tensor.BFloat16 {
			continue
		}
		plans[i].prealloc = dt
		plans[i].dimFrom = make([][2]int, len(o.Shape))
		for axis, d := range o.Shape {
			plans[i].dimFrom[axis] = [2]int{-1, -1}
			if d >= 0 || axis >= len(o.DimNames) || o.DimNames[axis] == "" {
				continue
			}
			for j, in := range inputs {
				for k, name := range in.DimNames {
					if name == o.DimNames[axis] {
						plans[i].dimFrom[axis] = [2]int{j, k}
					}
				}
			}
		}
	}
	return plans
}

// allocOutputs pre-allocates the outputs that must not be left to ONNX
// Runtime (float16/bfloat16, whose auto-allocated copies lose bytes in the
// Go binding); the rest are allocated by ONNX Runtime.
func (p *Predictor) allocOutputs(inputs []*tensor.Tensor) ([]ort.Value, error) {
	out := make([]ort.Value, len(p.outputs))
	for i, plan := range p.outputs {
		if plan.prealloc == tensor.Invalid {
			continue
		}
		shape := make(ort.Shape, len(plan.spec.Shape))
		for axis, d := range plan.spec.Shape {
			if d >= 0 {
				shape[axis] = d
				continue
			}
			src := plan.dimFrom[axis]
			if src[0] < 0 || inputs[src[0]] == nil || src[1] >= len(inputs[src[0]].Shape) {
				return nil, fmt.Errorf("output '%s' is %s with a dynamic shape svc cannot size before the run", plan.spec.Name, plan.prealloc)
			}
			shape[axis] = inputs[src[0]].Shape[src[1]]
		}
		n := shape.FlattenedSize()
		if n == 0 {
			continue
		}
		v, err := ort.NewCustomDataTensor(shape, make([]byte, 2*n), ortTypeOf(plan.prealloc))
		if err != nil {
			return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
		}
		out[i] = v
	}
	return out, nil
}
