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
		if dt == tensor.String || !dt.Valid() || o.Shape == nil {
			continue
		}
		dimFrom, known := dimSources(inputs, o)
		switch dt {
		case tensor.Float16, tensor.BFloat16:
			plans[i].prealloc = dt
			plans[i].dimFrom = dimFrom
		default:
			if known {
				plans[i].pooled = true
				plans[i].dimFrom = dimFrom
			}
		}
	}
	return plans
}

// dimSources maps each dynamic dimension of output o to an input dimension
// of the same symbolic name ({input index, axis}, {-1, -1} when there is
// none); known says every dynamic dimension has one.
func dimSources(inputs []InputSpec, o OutputSpec) (from [][2]int, known bool) {
	from = make([][2]int, len(o.Shape))
	known = true
	for axis, d := range o.Shape {
		from[axis] = [2]int{-1, -1}
		if d >= 0 {
			continue
		}
		if axis < len(o.DimNames) && o.DimNames[axis] != "" {
			for j, in := range inputs {
				for k, name := range in.DimNames {
					if name == o.DimNames[axis] {
						from[axis] = [2]int{j, k}
					}
				}
			}
		}
		known = known && from[axis][0] >= 0
	}
	return from, known
}

// allocOutputs pre-allocates the outputs that must not be left to ONNX
// Runtime: float16/bfloat16 (whose auto-allocated copies lose bytes in the
// Go binding) and rank-0 outputs, declared so or marked in scalarAt (nil:
// none marked; an output of unknown shape that came back rank 0). With
// pooled, it also gives the large outputs planned so storage from the
// tensor pools (see outputPlan.pooled), and so it does to those memo gives
// a shape for (see shapeMemo; memo may be nil), and marks them in pooledAt
// (nil: none). The rest are allocated by ONNX Runtime. On error nothing is
// left allocated.
func (p *Predictor) allocOutputs(inputs []*tensor.Tensor, scalarAt []bool, pooled bool, memo []ort.Shape) (out []ort.Value, pooledAt []bool, err error) {
	out = make([]ort.Value, len(p.outputs))
	// markPooled records that output i holds pooled storage.
	markPooled := func(i int) {
		if pooledAt == nil {
			pooledAt = make([]bool, len(out))
		}
		pooledAt[i] = true
	}
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
					return nil, nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
				}
				out[i] = v
				continue
			}
			if !hasScalar(plan.dtype) {
				return nil, nil, fmt.Errorf("output '%s' is a rank-0 %s, which svc's ONNX Runtime binding cannot return", plan.spec.Name, plan.dtype)
			}
			v, err := newScalar(plan.dtype)
			if err != nil {
				return nil, nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
			}
			out[i] = v
			continue
		}
		if plan.pooled && pooled {
			shape, ok := plan.shapeFor(inputs)
			if !ok {
				continue // an optional input left out: ONNX Runtime sizes it
			}
			v, err := newPooledOutput(plan.dtype, shape)
			if err != nil {
				return nil, nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
			}
			if v != nil { // nil when small: ONNX Runtime allocates it
				out[i] = v
				markPooled(i)
			}
			continue
		}
		if plan.prealloc == tensor.Invalid {
			if memo != nil && memo[i] != nil && plan.memoable() {
				v, err := newPooledOutput(plan.dtype, memo[i])
				if err != nil {
					return nil, nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
				}
				if v != nil {
					out[i] = v
					markPooled(i)
				}
			}
			continue
		}
		shape, ok := plan.shapeFor(inputs)
		if !ok {
			return nil, nil, fmt.Errorf("output '%s' is %s with a dynamic shape svc cannot size before the run", plan.spec.Name, plan.prealloc)
		}
		// The Go binding wants at least one byte even for an empty tensor.
		n := max(shape.FlattenedSize(), 1)
		v, err := ort.NewCustomDataTensor(shape, make([]byte, 2*n), ortTypeOf(plan.prealloc))
		if err != nil {
			return nil, nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
		}
		out[i] = v
	}
	return out, pooledAt, nil
}

// shapeFor is the output's shape for these inputs, its dynamic dimensions
// taken from the input dimensions of the same name; ok is false when one
// of them is not at hand.
func (plan *outputPlan) shapeFor(inputs []*tensor.Tensor) (shape ort.Shape, ok bool) {
	shape = make(ort.Shape, len(plan.spec.Shape))
	for axis, d := range plan.spec.Shape {
		if d >= 0 {
			shape[axis] = d
			continue
		}
		src := plan.dimFrom[axis]
		if src[0] < 0 || inputs[src[0]] == nil || src[1] >= len(inputs[src[0]].Shape) {
			return nil, false
		}
		shape[axis] = inputs[src[0]].Shape[src[1]]
	}
	return shape, true
}

// newPooledOutput allocates an output of element type dt and this shape
// from the tensor pools, or returns nil when it is too small to pool.
func newPooledOutput(dt tensor.DType, shape ort.Shape) (ort.Value, error) {
	n := shape.FlattenedSize()
	if n <= 0 || n*int64(dt.Size()) < tensor.MinPooled {
		return nil, nil
	}
	switch dt {
	case tensor.Float32:
		return ort.NewTensor(shape, tensor.MakeSlice[float32](int(n)))
	case tensor.Float64:
		return ort.NewTensor(shape, tensor.MakeSlice[float64](int(n)))
	case tensor.Int8:
		return ort.NewTensor(shape, tensor.MakeSlice[int8](int(n)))
	case tensor.Int16:
		return ort.NewTensor(shape, tensor.MakeSlice[int16](int(n)))
	case tensor.Int32:
		return ort.NewTensor(shape, tensor.MakeSlice[int32](int(n)))
	case tensor.Int64:
		return ort.NewTensor(shape, tensor.MakeSlice[int64](int(n)))
	case tensor.Uint8:
		return ort.NewTensor(shape, tensor.MakeSlice[uint8](int(n)))
	case tensor.Uint16:
		return ort.NewTensor(shape, tensor.MakeSlice[uint16](int(n)))
	case tensor.Uint32:
		return ort.NewTensor(shape, tensor.MakeSlice[uint32](int(n)))
	case tensor.Uint64:
		return ort.NewTensor(shape, tensor.MakeSlice[uint64](int(n)))
	case tensor.Bool:
		return ort.NewTensor(shape, tensor.MakeSlice[bool](int(n)))
	}
	return nil, nil
}
