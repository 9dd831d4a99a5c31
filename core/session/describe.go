package session

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"unsafe"

	"github.com/svc-dev/svc/core"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/onnxpb"
	"github.com/svc-dev/svc/core/tensor"
)

// description is what svc knows about a model file before serving it.
type description struct {
	inputs  []core.InputSpec
	outputs []core.OutputSpec
	// defaults parallels inputs: the default value of optional inputs.
	defaults      []*tensor.Tensor
	externalFiles []string
	// size is the model file's with its external data files'.
	size int64
}

// describe reads the model's graph inputs and outputs from the file. An
// input that is also an initializer (ONNX IR version 4 and later) is
// optional: its initializer is the default value, which ONNX Runtime lets
// a request override.
//
// The model file and its external data files must be regular files of
// at most limit bytes together (runtime.max_model_size): anything else
// is refused here, before it is read and before ONNX Runtime opens it.
func describe(file string, limit int64) (*description, error) {
	data, err := core.ReadModelFile(file, limit)
	if err != nil {
		return nil, err
	}
	m, err := onnxpb.UnmarshalShared(data)
	if err != nil {
		return nil, fmt.Errorf("read model: %s: %w", file, err)
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
	sizes, err := core.CheckExternalData(file, int64(len(data)), d.externalFiles, limit)
	if err != nil {
		return nil, err
	}
	d.size = int64(len(data))
	for _, n := range sizes {
		d.size += n
	}
	for _, vi := range m.Graph.Inputs {
		optional := inits[vi.Name]
		if optional && m.IRVersion < 4 {
			// Before IR version 4 every initializer is listed as an input;
			// ONNX Runtime treats them as constants.
			continue
		}
		spec := core.InputSpec{Name: vi.Name, Required: !optional, Description: vi.DocString}
		spec.Kind, spec.Type, spec.Shape, spec.DimNames = typeInfo(vi.Type)
		if spec.Kind != core.KindTensor {
			return nil, fmt.Errorf("input %q is a %s; svc serves tensor inputs only", vi.Name, spec.Type)
		}
		if dt, ok := tensor.ParseDType(spec.Type); !ok || dt == tensor.Invalid {
			return nil, fmt.Errorf("input %q has element type %s, which svc does not support", vi.Name, spec.Type)
		}
		var def *tensor.Tensor
		if optional {
			if def, err = defaultValue(m.Initializer(vi.Name), dir, sizes); err != nil {
				return nil, fmt.Errorf("default value of input %q: %w", vi.Name, err)
			}
		}
		d.inputs = append(d.inputs, spec)
		d.defaults = append(d.defaults, def)
	}
	for _, vi := range m.Graph.Outputs {
		spec := core.OutputSpec{Name: vi.Name, Description: vi.DocString}
		spec.Kind, spec.Type, spec.Shape, spec.DimNames = typeInfo(vi.Type)
		d.outputs = append(d.outputs, spec)
	}
	fillUntypedOutputs(file, d.outputs)
	return d, nil
}

// typeInfo turns an ONNX type into a kind, a type name, a shape (-1 for
// dynamic dimensions, nil for unknown rank) and the names of symbolic
// dimensions.
func typeInfo(t *onnxpb.TypeProto) (core.ValueKind, string, []int64, []string) {
	switch {
	case t == nil:
		return core.KindOther, "unknown", nil, nil
	case t.Tensor != nil:
		if t.Tensor.Shape == nil {
			return core.KindTensor, t.String(), nil, nil
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
		return core.KindTensor, t.String(), shape, names
	case t.Sequence != nil:
		return core.KindSequence, t.String(), nil, nil
	case t.Map != nil:
		return core.KindMap, t.String(), nil, nil
	}
	return core.KindOther, t.String(), nil, nil
}

// defaultValue decodes an initializer into a tensor; sizes are the
// external data files' (checked by core.CheckExternalData), which the
// data must lie within.
func defaultValue(init *onnxpb.TensorProto, dir string, sizes map[string]int64) (*tensor.Tensor, error) {
	if init == nil {
		return nil, errors.New("no initializer")
	}
	if init.IsExternal() {
		ref, err := init.External()
		if err != nil {
			return nil, err
		}
		if size := sizes[ref.Location]; ref.Offset > size || ref.Length > size-ref.Offset {
			return nil, fmt.Errorf("its external data (offset %d, length %d) lies beyond the end of %q (%d bytes)", ref.Offset, ref.Length, ref.Location, size)
		}
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

// fillUntypedOutputs takes the type of outputs declared without one from
// ONNX Runtime, which infers it; their shape stays unknown.
func fillUntypedOutputs(file string, outputs []core.OutputSpec) {
	untyped := false
	for _, o := range outputs {
		untyped = untyped || o.Kind == core.KindOther
	}
	if !untyped {
		return
	}
	_, infos, err := ort.GetInputOutputInfo(file)
	if err != nil {
		return
	}
	for i := range outputs {
		if outputs[i].Kind != core.KindOther {
			continue
		}
		for _, info := range infos {
			if info.Name == outputs[i].Name && info.OrtValueType == ort.ONNXTypeTensor {
				if dt := dtypeOf(info.DataType); dt != tensor.Invalid {
					outputs[i].Kind, outputs[i].Type, outputs[i].Shape = core.KindTensor, dt.String(), nil
				}
			}
		}
	}
}

func fillMetadata(info *core.ModelInfo, md *ort.ModelMetadata) {
	keys, _ := md.GetCustomMetadataMapKeys()
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok, err := md.LookupCustomMetadataMap(k); err == nil && ok {
			info.Metadata[k] = v
		}
	}
	if d, err := md.GetDescription(); err == nil && d != "" {
		info.Metadata["description"] = d
	}
	if s, err := md.GetProducerName(); err == nil && s != "" {
		info.Metadata["producer"] = s
	}
	if g, err := md.GetGraphName(); err == nil && g != "" {
		info.Metadata["graph"] = g
	}
	if info.Version == "" {
		if v, ok := info.Metadata["version"]; ok && v != "" {
			info.Version = v
		} else if v, err := md.GetVersion(); err == nil && v > 0 && v != math.MaxInt64 {
			// ONNX Runtime reports an unset model_version as the largest
			// int64.
			info.Version = strconv.FormatInt(v, 10)
		}
	}
}

// inputNames lists the inputs' names in order.
func (d *description) inputNames() []string {
	names := make([]string, len(d.inputs))
	for i, in := range d.inputs {
		names[i] = in.Name
	}
	return names
}

// outputNames lists the outputs' names in order.
func (d *description) outputNames() []string {
	names := make([]string, len(d.outputs))
	for i, out := range d.outputs {
		names[i] = out.Name
	}
	return names
}
