package core

import "encoding/json"

// Health is the body of GET /health.
type Health struct {
	Status string `json:"status"`
	Model  string `json:"model"`
}

// ValueKind tells what kind of ONNX value an input or output is.
type ValueKind string

// Value kinds reported for inputs and outputs.
const (
	KindTensor   ValueKind = "tensor"
	KindSequence ValueKind = "sequence"
	KindMap      ValueKind = "map"
	KindOther    ValueKind = "other"
)

// InputSpec describes one model input, as GET /info reports it.
type InputSpec struct {
	Name string `json:"name"`
	// Type is the element type name (float32, int64, string, ...) for tensors;
	// for non-tensor values it names the container, e.g. "seq(map(string,float32))".
	Type string `json:"type"`
	// Shape has -1 for dynamic dimensions; nil (absent) for non-tensor values.
	Shape []int64 `json:"shape,omitempty"`
	// Required is false for an input that has a default initializer.
	Required    bool      `json:"required"`
	Description string    `json:"description,omitempty"`
	Kind        ValueKind `json:"-"`
	// DimNames holds the symbolic name of each dynamic dimension ("" if none).
	DimNames []string `json:"-"`
}

// OutputSpec describes one model output, as GET /info reports it.
type OutputSpec struct {
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Shape       []int64   `json:"shape,omitempty"`
	Labels      []string  `json:"labels,omitempty"`
	Description string    `json:"description,omitempty"`
	Kind        ValueKind `json:"-"`
	DimNames    []string  `json:"-"`
}

// ModelInfo is the body of GET /info.
type ModelInfo struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Format   string            `json:"format"`
	SizeMB   float64           `json:"size_mb"`
	Path     string            `json:"path,omitempty"`
	Inputs   []InputSpec       `json:"inputs"`
	Outputs  []OutputSpec      `json:"outputs"`
	Metadata map[string]string `json:"metadata"`
}

// ProviderInfo describes the execution provider in use (GET /metrics).
type ProviderInfo struct {
	Name        string `json:"name"`
	Available   bool   `json:"available"`
	Platform    string `json:"platform"`
	Description string `json:"description,omitempty"`
}

// Metrics is the body of GET /metrics.
type Metrics struct {
	Provider           ProviderInfo `json:"provider"`
	AvailableProviders []string     `json:"available_providers"`
	CompiledProviders  []string     `json:"compiled_providers"`
}

// MarshalJSON writes shape [] for rank-0 tensors and leaves it out for
// non-tensor values.
func (s InputSpec) MarshalJSON() ([]byte, error) {
	type plain InputSpec
	return json.Marshal(struct {
		plain
		Shape *[]int64 `json:"shape,omitempty"`
	}{plain(s), shapeField(s.Kind, s.Shape)})
}

// MarshalJSON writes shape [] for rank-0 tensors and leaves it out for
// non-tensor values.
func (s OutputSpec) MarshalJSON() ([]byte, error) {
	type plain OutputSpec
	return json.Marshal(struct {
		plain
		Shape *[]int64 `json:"shape,omitempty"`
	}{plain(s), shapeField(s.Kind, s.Shape)})
}

func shapeField(k ValueKind, shape []int64) *[]int64 {
	if (k != KindTensor && k != "") || shape == nil {
		// Non-tensor values and tensors of unknown rank have no shape.
		return nil
	}
	return &shape
}
