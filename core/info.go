package core

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
	Required    bool
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
}

// Platform is what the host's ONNX Runtime library offers and what this
// binary has compiled in.
type Platform struct {
	// Available lists the execution providers the library offers (ONNX
	// Runtime names).
	Available []string
	// Compiled lists the --provider values compiled into this binary.
	Compiled []string
}
