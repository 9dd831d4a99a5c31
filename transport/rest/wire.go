package rest

import (
	"encoding/json"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/seq"
)

// Health is the body of GET /health.
type Health struct {
	Status string `json:"status"`
	Model  string `json:"model"`
}

// InputInfo describes one model input in GET /info.
type InputInfo struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
	// Image is present for an image input (svc.yml's inputs.NAME.image).
	Image *ImageInfo `json:"image,omitempty"`
	// Shape has -1 for dynamic dimensions; [] for rank 0; absent for
	// non-tensor values and tensors of unknown rank. It comes last, as it
	// always has.
	Shape *[]int64 `json:"shape,omitempty"`
}

// ImageInfo describes an image input: what it accepts and how pictures
// become its tensor.
type ImageInfo struct {
	Formats []string `json:"formats"`
	// Settings are those in force: the preset's, with svc.yml's overrides.
	image.Settings
}

// DecodeInfo describes a decoded output: its kind (classify or ctc) and
// what it answers.
type DecodeInfo struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`
}

// OutputInfo describes one model output in GET /info.
type OutputInfo struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Labels      []string `json:"labels,omitempty"`
	Description string   `json:"description,omitempty"`
	// Decode is present for an output svc.yml gives a meaning
	// (outputs.NAME.classify or .ctc); ?raw=true answers the tensor.
	Decode *DecodeInfo `json:"decode,omitempty"`
	Shape  *[]int64    `json:"shape,omitempty"`
}

// Info is the body of GET /info.
type Info struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Format   string            `json:"format"`
	SizeMB   float64           `json:"size_mb"`
	Path     string            `json:"path,omitempty"`
	Inputs   []InputInfo       `json:"inputs"`
	Outputs  []OutputInfo      `json:"outputs"`
	Metadata map[string]string `json:"metadata"`
	// Sequence is present for a model with state that svc keeps between
	// the steps of a sequence (docs/sequences.md).
	Sequence *seq.Description `json:"sequence,omitempty"`
}

// ProviderInfo describes the execution provider in use (GET /metrics).
type ProviderInfo struct {
	Name        string `json:"name"`
	Available   bool   `json:"available"`
	Platform    string `json:"platform"`
	Description string `json:"description,omitempty"`
}

// Metrics is the JSON body of GET /metrics.
type Metrics struct {
	Provider ProviderInfo `json:"provider"`
	// AvailableProviders are the providers compiled into svc and usable
	// on this host (what 'svc providers' reports usable).
	AvailableProviders []string `json:"available_providers"`
	// CompiledProviders are the --provider values compiled into svc.
	CompiledProviders []string `json:"compiled_providers"`
	// RuntimeProviders are what the ONNX Runtime library was built with
	// (GetAvailableProviders), usable here or not.
	RuntimeProviders []string `json:"runtime_providers"`
}

// NewInfo converts the model's description to its /info form.
func NewInfo(m core.ModelInfo) Info {
	out := Info{
		Name: m.Name, Version: m.Version, Format: m.Format, SizeMB: m.SizeMB, Path: m.Path,
		Inputs: make([]InputInfo, len(m.Inputs)), Outputs: make([]OutputInfo, len(m.Outputs)),
		Metadata: m.Metadata,
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	for i, in := range m.Inputs {
		out.Inputs[i] = InputInfo{Name: in.Name, Type: in.Type, Shape: shapeField(in.Kind, in.Shape), Required: in.Required, Description: in.Description}
	}
	for i, o := range m.Outputs {
		out.Outputs[i] = OutputInfo{Name: o.Name, Type: o.Type, Shape: shapeField(o.Kind, o.Shape), Labels: o.Labels, Description: o.Description}
	}
	return out
}

// NewMediaInfo is NewInfo with the image inputs and decoded outputs of
// media described (media nil: NewInfo).
func NewMediaInfo(m core.ModelInfo, media *codec.Set) Info {
	out := NewInfo(m)
	for _, im := range media.Images() {
		out.Inputs[im.Index].Image = NewImageInfo(im)
		out.Inputs[im.Index].Description = joinDescription(out.Inputs[im.Index].Description, im.Describe())
	}
	for _, o := range media.Outputs() {
		out.Outputs[o.Index].Decode = &DecodeInfo{Kind: o.Kind, Description: o.Describe()}
	}
	for i := range out.Outputs {
		if media.Consumed(i) {
			out.Outputs[i].Description = joinDescription(out.Outputs[i].Description, "Read by a segment output (its prototype masks): /predict answers it with ?raw=true only.")
		}
	}
	if x := media.Text(); x != nil {
		addTextInfo(&out, x)
	}
	return out
}

// NewImageInfo is what /info says of an image input: the formats it
// takes and the settings in force.
func NewImageInfo(im *codec.Image) *ImageInfo {
	return &ImageInfo{Formats: image.Formats(), Settings: im.Plan.Resolved()}
}

func joinDescription(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// Model converts an /info body back to the model's description (for
// fixtures and clients). What /info does not carry (value kinds, dimension
// names) is left empty, except that an entry with a shape is a tensor.
func (i Info) Model() core.ModelInfo {
	out := core.ModelInfo{
		Name: i.Name, Version: i.Version, Format: i.Format, SizeMB: i.SizeMB, Path: i.Path,
		Inputs: make([]core.InputSpec, len(i.Inputs)), Outputs: make([]core.OutputSpec, len(i.Outputs)),
		Metadata: i.Metadata,
	}
	for k, in := range i.Inputs {
		out.Inputs[k] = core.InputSpec{Name: in.Name, Type: in.Type, Required: in.Required, Description: in.Description}
		if in.Shape != nil {
			out.Inputs[k].Shape, out.Inputs[k].Kind = *in.Shape, core.KindTensor
		}
	}
	for k, o := range i.Outputs {
		out.Outputs[k] = core.OutputSpec{Name: o.Name, Type: o.Type, Labels: o.Labels, Description: o.Description}
		if o.Shape != nil {
			out.Outputs[k].Shape, out.Outputs[k].Kind = *o.Shape, core.KindTensor
		}
	}
	return out
}

// shapeField writes shape [] for rank-0 tensors and leaves it out for
// non-tensor values and tensors of unknown rank.
func shapeField(k core.ValueKind, shape []int64) *[]int64 {
	if (k != core.KindTensor && k != "") || shape == nil {
		return nil
	}
	return &shape
}

// NewMetrics builds the JSON metrics record for the provider in use.
func NewMetrics(name, platform, description string, p core.Platform) Metrics {
	m := Metrics{
		Provider:           ProviderInfo{Name: name, Available: true, Platform: platform, Description: description},
		AvailableProviders: p.Available,
		CompiledProviders:  p.Compiled,
		RuntimeProviders:   p.Runtime,
	}
	if m.AvailableProviders == nil {
		m.AvailableProviders = []string{}
	}
	if m.CompiledProviders == nil {
		m.CompiledProviders = []string{}
	}
	if m.RuntimeProviders == nil {
		m.RuntimeProviders = []string{}
	}
	return m
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps, slices, strings and numbers: cannot fail.
		panic(err)
	}
	return b
}
