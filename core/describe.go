package core

import (
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/onnxpb"
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

// describe reads the model's graph inputs and outputs from the file. An
// input that is also an initializer (ONNX IR version 4 and later) is
// optional: its initializer is the default value, which ONNX Runtime lets
// a request override.
func describe(file string) (*description, error) {
	m, err := onnxpb.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	if m.Graph == nil {
		return nil, errors.New("the file holds no graph")
	}
	d := &description{}
	dir := filepath.Dir(file)
	inits := m.InitializerNames()
	seen := map[string]bool{}
	for _, init := range m.Graph.Initializers {
		if !init.IsExternal() {
			continue
		}
		if ref, err := init.External(); err == nil && !seen[ref.Location] {
			seen[ref.Location] = true
			d.externalFiles = append(d.externalFiles, ref.Location)
		}
	}
	for _, vi := range m.Graph.Inputs {
		optional := inits[vi.Name]
		if optional && m.IRVersion < 4 {
			// Before IR version 4 every initializer is listed as an input;
			// ONNX Runtime treats them as constants.
			continue
		}
		spec := InputSpec{Name: vi.Name, Required: !optional, Description: vi.DocString}
		spec.Kind, spec.Type, spec.Shape, spec.DimNames = typeInfo(vi.Type)
		if spec.Kind != KindTensor {
			return nil, fmt.Errorf("input %q is a %s; svc serves tensor inputs only", vi.Name, spec.Type)
		}
		if dt, ok := tensor.ParseDType(spec.Type); !ok || dt == tensor.Invalid {
			return nil, fmt.Errorf("input %q has element type %s, which svc does not support", vi.Name, spec.Type)
		}
		var def *tensor.Tensor
		if optional {
			if def, err = defaultValue(m.Initializer(vi.Name), dir); err != nil {
				return nil, fmt.Errorf("default value of input %q: %w", vi.Name, err)
			}
		}
		d.inputs = append(d.inputs, spec)
		d.defaults = append(d.defaults, def)
	}
	for _, vi := range m.Graph.Outputs {
		spec := OutputSpec{Name: vi.Name, Description: vi.DocString}
		spec.Kind, spec.Type, spec.Shape, spec.DimNames = typeInfo(vi.Type)
		d.outputs = append(d.outputs, spec)
	}
	fillUntypedOutputs(file, d.outputs)
	return d, nil
}

// typeInfo turns an ONNX type into a kind, a type name, a shape (-1 for
// dynamic dimensions, nil for unknown rank) and the names of symbolic
// dimensions.
func typeInfo(t *onnxpb.TypeProto) (ValueKind, string, []int64, []string) {
	switch {
	case t == nil:
		return KindOther, "unknown", nil, nil
	case t.Tensor != nil:
		if t.Tensor.Shape == nil {
			return KindTensor, t.String(), nil, nil
		}
		shape := make([]int64, len(t.Tensor.Shape))
		names := make([]string, len(t.Tensor.Shape))
		for i, dim := range t.Tensor.Shape {
			shape[i] = -1
			if dim.IsFixed() {
				shape[i] = dim.Value
			}
			names[i] = dim.Param
		}
		return KindTensor, t.String(), shape, names
	case t.Sequence != nil:
		return KindSequence, t.String(), nil, nil
	case t.Map != nil:
		return KindMap, t.String(), nil, nil
	}
	return KindOther, t.String(), nil, nil
}

// defaultValue decodes an initializer into a tensor.
func defaultValue(init *onnxpb.TensorProto, dir string) (*tensor.Tensor, error) {
	if init == nil {
		return nil, errors.New("no initializer")
	}
	init, err := init.LoadExternal(dir)
	if err != nil {
		return nil, err
	}
	v, err := init.Values()
	if err != nil {
		return nil, err
	}
	dt, ok := tensor.ParseDType(onnxpb.ElemTypeName(init.DataType))
	if !ok {
		return nil, fmt.Errorf("unsupported element type %s", onnxpb.ElemTypeName(init.DataType))
	}
	switch x := v.(type) {
	case []onnxpb.Float16:
		v = unsafe.Slice((*uint16)(unsafe.SliceData(x)), len(x))
	case []onnxpb.BFloat16:
		v = unsafe.Slice((*uint16)(unsafe.SliceData(x)), len(x))
	}
	shape := append([]int64{}, init.Dims...)
	return &tensor.Tensor{DType: dt, Shape: shape, Data: v}, nil
}

// planOutputs works out how to allocate each output before a run: float16
// and bfloat16 outputs are sized from the inputs' dimensions, rank-0
// outputs get a scalar (the Go binding cannot wrap a rank-0 value that ONNX
// Runtime allocated).
func planOutputs(inputs []InputSpec, outputs []OutputSpec) []outputPlan {
	plans := make([]outputPlan, len(outputs))
	for i, o := range outputs {
		plans[i].spec = o
		if o.Kind != KindTensor {
			continue
		}
		dt, _ := tensor.ParseDType(o.Type)
		plans[i].dtype = dt
		if o.Shape != nil && len(o.Shape) == 0 {
			plans[i].rank0 = true
			continue
		}
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
// Runtime: float16/bfloat16 (whose auto-allocated copies lose bytes in the
// Go binding) and rank-0 outputs, declared so or marked in scalarAt (nil:
// none marked; an
// output of unknown shape that came back rank 0); the rest are allocated
// by ONNX Runtime. On error nothing is left allocated.
func (p *Predictor) allocOutputs(inputs []*tensor.Tensor, scalarAt []bool) (out []ort.Value, err error) {
	out = make([]ort.Value, len(p.outputs))
	defer func() {
		if err != nil {
			destroyValues(out)
		}
	}()
	for i, plan := range p.outputs {
		if (plan.rank0 || (scalarAt != nil && scalarAt[i])) && plan.dtype != tensor.String {
			// ONNX Runtime allocates rank-0 strings, and the binding
			// wraps those.
			if plan.dtype == tensor.Float16 || plan.dtype == tensor.BFloat16 {
				// No rank-0 custom-data values in the binding: a [1]
				// tensor, which holds the result when the run's own
				// output is [1] (rank-0 inputs of these types go in as
				// [1]); Result reports it as rank 0.
				v, err := ort.NewCustomDataTensor(ort.NewShape(1), make([]byte, 2), ortTypeOf(plan.dtype))
				if err != nil {
					return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
				}
				out[i] = v
				continue
			}
			if !hasScalar(plan.dtype) {
				return nil, fmt.Errorf("output '%s' is a rank-0 %s, which svc's ONNX Runtime binding cannot return", plan.spec.Name, plan.dtype)
			}
			v, err := newScalar(plan.dtype)
			if err != nil {
				return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
			}
			out[i] = v
			continue
		}
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
		// The Go binding wants at least one byte even for an empty tensor.
		n := max(shape.FlattenedSize(), 1)
		v, err := ort.NewCustomDataTensor(shape, make([]byte, 2*n), ortTypeOf(plan.prealloc))
		if err != nil {
			return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
		}
		out[i] = v
	}
	return out, nil
}
