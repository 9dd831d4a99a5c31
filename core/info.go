package core

import (
	"errors"
	"fmt"
)

// ValueKind tells what kind of ONNX value an input or output is.
type ValueKind string

// Value kinds reported for inputs and outputs.
const (
	KindTensor   ValueKind = "tensor"
	KindSequence ValueKind = "sequence"
	KindMap      ValueKind = "map"
	KindOther    ValueKind = "other"
)

// InputSpec describes one model input.
type InputSpec struct {
	Name string
	// Type is the element type name (float32, int64, string, ...) for tensors;
	// for non-tensor values it names the container, e.g. "seq(map(string,float32))".
	Type string
	// Shape has -1 for dynamic dimensions; nil for non-tensor values and
	// tensors of unknown rank; empty for rank 0.
	Shape []int64
	// Required is false for an input that has a default initializer.
	Required bool
	// Pictures says that this string input takes encoded pictures, one an
	// element, which the runner decodes itself (a pipeline): the v1 API
	// takes a picture body or multipart files for it too.
	Pictures    bool
	Description string
	Kind        ValueKind
	// DimNames holds the symbolic name of each dynamic dimension ("" if none).
	DimNames []string
}

// OutputSpec describes one model output.
type OutputSpec struct {
	Name        string
	Type        string
	Shape       []int64
	Labels      []string
	Description string
	Kind        ValueKind
	DimNames    []string
	// JSON says that each element of this string output is a JSON
	// document (a pipeline's answer): the v1 API answers it as JSON, not
	// as a string.
	JSON bool
}

// ModelInfo describes the loaded model: what every protocol reports about
// it, each in its own form.
type ModelInfo struct {
	Name    string
	Version string
	Format  string
	// SizeMB is the size of the model file and its external data, in MiB.
	SizeMB float64
	// Path is the absolute path of the model file.
	Path     string
	Inputs   []InputSpec
	Outputs  []OutputSpec
	Metadata map[string]string
	// Parameters are the settings a request may give the model's runner
	// itself (a pipeline's), in /predict's query string and the Open
	// Inference Protocol's parameters; the runner checks them (ParamsOf).
	Parameters []Parameter
}

// Parameter is one setting a request may give the model's runner.
type Parameter struct {
	Name string
	// Doc says what it does and its default.
	Doc string
	// Type is "number" or "boolean"; a number lies within Min and Max,
	// over Min when MinExclusive.
	Type         string
	Min, Max     float64
	MinExclusive bool
}

// Platform is which execution providers this binary has compiled in,
// which of them can run on this host, and which the ONNX Runtime library
// was built with.
type Platform struct {
	// Available lists the compiled-in providers usable on this host now
	// (ONNX Runtime names, highest priority first), as 'svc providers'
	// determines: e.g. CUDA only with its libraries, a driver and a device.
	Available []string
	// Compiled lists the --provider values compiled into this binary.
	Compiled []string
	// Runtime is the ONNX Runtime library's GetAvailableProviders: what it
	// was built with, whether or not the host can run it.
	Runtime []string
}

// Batchable reports whether the model's inputs and outputs all carry a
// dynamic leading (batch) dimension, which merging requests needs; if not,
// it says why.
func Batchable(info ModelInfo) error {
	if len(info.Inputs) == 0 {
		return errors.New("the model has no inputs")
	}
	var name string
	for i, in := range info.Inputs {
		if len(in.Shape) == 0 || in.Shape[0] != -1 {
			return fmt.Errorf("input %q has no dynamic batch dimension", in.Name)
		}
		if i == 0 && len(in.DimNames) > 0 {
			name = in.DimNames[0]
		}
		if len(in.DimNames) > 0 && in.DimNames[0] != name {
			return fmt.Errorf("inputs disagree on the batch dimension (%q and %q)", name, in.DimNames[0])
		}
	}
	for _, out := range info.Outputs {
		if out.Kind != KindTensor || len(out.Shape) == 0 || out.Shape[0] != -1 {
			return fmt.Errorf("output %q has no dynamic batch dimension", out.Name)
		}
	}
	return nil
}
