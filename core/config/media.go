package config

import (
	"fmt"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// DefaultMaxImagePixels caps an image's width × height, read from its
// header before it is decoded: 40 megapixels (an 8K frame is 33).
const DefaultMaxImagePixels = 40_000_000

// ModelInput declares how one input is made from what users send. Nil
// fields leave the input a plain tensor.
type ModelInput struct {
	// Image makes the input an image input: encoded pictures in, the
	// model's tensor made on the server (core/codec/image).
	Image *ImageInput `yaml:"image"`
}

// ImageInput is an image input's preprocessing: a preset, explicit
// settings, or a preset with overrides. Its fields are those of
// core/codec/image.Settings, which converts from it.
type ImageInput struct {
	Preset        string    `yaml:"preset"`
	Size          []int     `yaml:"size"`
	Resize        string    `yaml:"resize"`
	Interpolation string    `yaml:"interpolation"`
	Color         string    `yaml:"color"`
	Scale         *float64  `yaml:"scale"`
	Mean          []float64 `yaml:"mean"`
	Std           []float64 `yaml:"std"`
	Layout        string    `yaml:"layout"`
	Pad           *float64  `yaml:"pad"`
	WidthMultiple int       `yaml:"width_multiple"`
	MaxWidth      int       `yaml:"max_width"`
}

// ModelOutput declares what one output means. At most one of its fields
// is set; nil fields leave the output a plain tensor.
type ModelOutput struct {
	// Classify answers the top classes with labels and scores.
	Classify *Classify `yaml:"classify"`
	// CTC answers text, decoded greedily from per-step class scores.
	CTC *CTC `yaml:"ctc"`
}

// Classify is a classification output's decoding.
type Classify struct {
	// Softmax applies softmax over the classes first; nil = off (the
	// model outputs probabilities).
	Softmax *bool `yaml:"softmax"`
	// TopK is how many classes to answer per item (0 = 1).
	TopK int `yaml:"top_k"`
	// Labels are the class labels; empty = the model entry's labels for
	// this output, then the model's metadata.
	Labels Labels `yaml:"labels"`
}

// CTC is a CTC output's decoding.
type CTC struct {
	// Labels are the characters without the blank.
	Labels Labels `yaml:"labels"`
	// Blank is the blank class's index.
	Blank int `yaml:"blank"`
	// Space appends " " as the last class; nil = when the class count
	// has room for it.
	Space *bool `yaml:"space"`
}

// Labels is a label list written inline (a YAML list) or as a file of one
// label per line (a string: its path, relative to svc.yml).
type Labels struct {
	File string
	List []string
}

// UnmarshalYAML accepts a list of strings or a file path.
func (l *Labels) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&l.File)
	case yaml.SequenceNode:
		return n.Decode(&l.List)
	}
	return fmt.Errorf("line %d: labels: want a list of labels or the path of a label file", n.Line)
}

// Empty reports whether no labels were given.
func (l Labels) Empty() bool { return l.File == "" && len(l.List) == 0 }

// resolveMedia makes label file paths relative to dir absolute.
func (c *Config) resolveMedia(dir string) {
	for name, m := range c.Models {
		for out, o := range m.Outputs {
			if o.Classify != nil {
				o.Classify.Labels.File = absUnder(dir, o.Classify.Labels.File)
			}
			if o.CTC != nil {
				o.CTC.Labels.File = absUnder(dir, o.CTC.Labels.File)
			}
			m.Outputs[out] = o
		}
		if m.Text != nil {
			t := *m.Text
			t.resolve(dir)
			m.Text = &t
		}
		m.WarmUp = absUnder(dir, m.WarmUp)
		c.Models[name] = m
	}
}

func absUnder(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// checkMedia returns the first invalid inputs/outputs key of the models.
func (c *Config) checkMedia() (string, string) {
	for name, m := range c.Models {
		if m.Text != nil {
			if key, why := m.Text.check("models." + name + ".text"); key != "" {
				return key, why
			}
		}
		for in, i := range m.Inputs {
			if i.Image == nil {
				return "models." + name + ".inputs." + in, "declares nothing: add image: {preset: ...} or remove it"
			}
		}
		for out, o := range m.Outputs {
			key := "models." + name + ".outputs." + out
			switch {
			case o.Classify == nil && o.CTC == nil:
				return key, "declares nothing: add classify: or ctc:, or remove it"
			case o.Classify != nil && o.CTC != nil:
				return key, "declares both classify and ctc: an output has one meaning"
			case o.Classify != nil && o.Classify.TopK < 0:
				return key + ".classify.top_k", "cannot be negative"
			case o.CTC != nil && o.CTC.Labels.Empty():
				return key + ".ctc.labels", "is required: the characters, as a list or a file of one per line"
			case o.CTC != nil && o.CTC.Blank < 0:
				return key + ".ctc.blank", "cannot be negative"
			}
		}
	}
	if c.Limits.MaxImagePixels < 0 {
		return "limits.max_image_pixels", "cannot be negative"
	}
	return "", ""
}
