package oip

import (
	"context"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Platform is the model metadata's platform.
const Platform = "onnx_onnxv1"

// ServerName is the server metadata's name.
const ServerName = "svc"

// View is what the protocol derives from the loaded model, once, for every
// codec: the inputs and outputs as the protocol sees them, the lists its
// messages name, and the model metadata.
type View struct {
	runner  core.Runner
	version string
	specs   []tensor.Spec
	outputs []outputInfo
	// tensors is every tensor output, in the model's order: what a
	// response carries when its request names no outputs.
	tensors    []RequestedOutput
	inputList  string
	outputList string
	// metadata lists the tensor inputs and outputs.
	metaInputs, metaOutputs []TensorMetadata
}

// outputInfo is one model output as the protocol sees it.
type outputInfo struct {
	name     string
	dtype    tensor.DType
	isTensor bool
	kind     core.ValueKind
}

// NewView derives the protocol's view of the model that r runs.
func NewView(r core.Runner) *View {
	info := r.Info()
	v := &View{runner: r, version: info.Version, specs: r.Specs(), metaInputs: []TensorMetadata{}, metaOutputs: []TensorMetadata{}}
	names := make([]string, 0, max(len(v.specs), len(info.Outputs)))
	for _, s := range v.specs {
		names = append(names, s.Name)
		if s.DType.Valid() {
			v.metaInputs = append(v.metaInputs, TensorMetadata{Name: s.Name, Datatype: Datatype(s.DType), Shape: metadataShape(s.Shape)})
		}
	}
	v.inputList = listOrNone(names)
	names = names[:0]
	for i, o := range info.Outputs {
		names = append(names, o.Name)
		dt, ok := tensor.ParseDType(o.Type)
		oi := outputInfo{name: o.Name, dtype: dt, kind: o.Kind, isTensor: ok && (o.Kind == core.KindTensor || o.Kind == "")}
		v.outputs = append(v.outputs, oi)
		if oi.isTensor {
			v.tensors = append(v.tensors, RequestedOutput{Index: i})
			v.metaOutputs = append(v.metaOutputs, TensorMetadata{Name: o.Name, Datatype: Datatype(dt), Shape: metadataShape(o.Shape)})
		}
	}
	v.outputList = listOrNone(names)
	return v
}

// Version is the model's version.
func (v *View) Version() string { return v.version }

// Spec is the model's input k.
func (v *View) Spec(k int) *tensor.Spec { return &v.specs[k] }

// OutputName is the name of the model's output i.
func (v *View) OutputName(i int) string { return v.outputs[i].name }

// OutputDatatype is the element type of the model's output i, as its
// metadata says.
func (v *View) OutputDatatype(i int) tensor.DType { return v.outputs[i].dtype }

// Metadata is the model metadata, the model being served as name: its
// tensor inputs and outputs (the others are left out, since the protocol
// carries tensors only). It shares its lists with v: read them only.
func (v *View) Metadata(name string) ModelMetadata {
	return ModelMetadata{Name: name, Versions: []string{v.version}, Platform: Platform, Inputs: v.metaInputs, Outputs: v.metaOutputs}
}

// Run runs the request's inputs through the model. The inputs go back to
// the tensor pools as soon as the run is over (no output shares their
// storage), before the answer is encoded.
func (v *View) Run(ctx context.Context, req *Request) (core.Result, error) {
	res, err := v.runner.Predict(ctx, req.inputs)
	tensor.RecycleAll(req.inputs)
	return res, err
}

// CheckResult checks that a run gave a value for each of the model's
// outputs.
func (v *View) CheckResult(res core.Result) error {
	if res.Len() != len(v.outputs) {
		return fmt.Errorf("the run gave %d outputs, the model has %d", res.Len(), len(v.outputs))
	}
	return nil
}

// OutputTensor is the model's output i in res, which must be a tensor.
func (v *View) OutputTensor(res core.Result, i int) (*tensor.Tensor, error) {
	val, err := res.Value(i)
	if err != nil {
		return nil, fmt.Errorf("output '%s': %w", v.outputs[i].name, err)
	}
	if val.Kind != core.KindTensor || val.Tensor == nil {
		return nil, fmt.Errorf("output '%s' is a %s, not a tensor", v.outputs[i].name, val.Kind)
	}
	return val.Tensor, nil
}

func (v *View) inputIndex(name string) int {
	for i := range v.specs {
		if v.specs[i].Name == name {
			return i
		}
	}
	return -1
}

func (v *View) outputIndex(name string) int {
	for i := range v.outputs {
		if v.outputs[i].name == name {
			return i
		}
	}
	return -1
}

// metadataShape is a shape for the metadata: -1 for dynamic dimensions; an
// input of unknown rank is [-1].
func metadataShape(s []int64) []int64 {
	if s == nil {
		return []int64{-1}
	}
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = max(d, -1)
	}
	return out
}

// listOrNone lists names for messages: 'a', 'b'; "none" when empty.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "'" + strings.Join(names, "', '") + "'"
}
