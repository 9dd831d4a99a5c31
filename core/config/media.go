package config

import (
	"fmt"
	"path/filepath"
	"slices"

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
	// Detect answers boxes, from an object detector's output.
	Detect *Detect `yaml:"detect"`
	// Segment answers boxes with their masks (YOLO-seg: the output of
	// boxes and mask coefficients, with the prototype masks' output).
	Segment *Detect `yaml:"segment"`
	// Pose answers boxes with their keypoints (YOLO-pose).
	Pose *Detect `yaml:"pose"`
}

// Detect is a detection output's decoding (detect, segment and pose):
// Ultralytics' post-processing, with its defaults.
type Detect struct {
	// Layout is yolov8, yolov5, end2end or rtdetr; "" tells it from the
	// output's shape and the model's metadata.
	Layout string `yaml:"layout"`
	// Confidence is the least score a box is kept with (kept when
	// strictly greater); nil = 0.25.
	Confidence *float64 `yaml:"confidence"`
	// IoU is the overlap above which suppression drops the lesser box;
	// nil = 0.7.
	IoU *float64 `yaml:"iou"`
	// MaxDet is the most boxes per picture; 0 = 300.
	MaxDet int `yaml:"max_det"`
	// Agnostic suppresses boxes of different classes too.
	Agnostic bool `yaml:"agnostic"`
	// Classes keeps only these class indices; empty = every class.
	Classes []int `yaml:"classes"`
	// Labels are the class labels; empty = the model's metadata (names).
	Labels Labels `yaml:"labels"`
	// Input is the image input whose pictures the boxes are of; "" = the
	// model's one image input.
	Input string `yaml:"input"`
	// Protos (segment) is the prototype masks' output; "" = the model's
	// other output of rank 4.
	Protos string `yaml:"protos"`
	// Keypoints (pose) is [keypoints, values per keypoint (2 or 3)];
	// empty = the model's metadata (kpt_shape).
	Keypoints []int `yaml:"keypoints"`
}

// Detection returns the output's detection decoding and its kind
// (detect, segment or pose), or nil.
func (o ModelOutput) Detection() (*Detect, string) {
	switch {
	case o.Detect != nil:
		return o.Detect, "detect"
	case o.Segment != nil:
		return o.Segment, "segment"
	case o.Pose != nil:
		return o.Pose, "pose"
	}
	return nil, ""
}

// kinds counts the meanings the output declares.
func (o ModelOutput) kinds() int {
	n := 0
	for _, set := range []bool{o.Classify != nil, o.CTC != nil, o.Detect != nil, o.Segment != nil, o.Pose != nil} {
		if set {
			n++
		}
	}
	return n
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
			if d, _ := o.Detection(); d != nil {
				d.Labels.File = absUnder(dir, d.Labels.File)
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

// check returns the first invalid key of a detection output's decoding
// declared under key, of kind detect, segment or pose.
func (d *Detect) check(key, kind string) (string, string) {
	unit := func(v *float64) bool { return v == nil || *v >= 0 && *v <= 1 }
	switch {
	case d.Layout != "" && !slices.Contains([]string{"yolov8", "yolov5", "end2end", "rtdetr"}, d.Layout):
		return key + ".layout", fmt.Sprintf("%q: one of yolov8, yolov5, end2end, rtdetr", d.Layout)
	case !unit(d.Confidence):
		return key + ".confidence", "takes a number from 0 to 1"
	case !unit(d.IoU):
		return key + ".iou", "takes a number from 0 to 1"
	case d.MaxDet < 0:
		return key + ".max_det", "cannot be negative"
	case slices.ContainsFunc(d.Classes, func(c int) bool { return c < 0 }):
		return key + ".classes", "takes class indices, 0 or more"
	case d.Protos != "" && kind != "segment":
		return key + ".protos", "belongs to segment: only a segmentation output has prototype masks"
	case len(d.Keypoints) > 0 && kind != "pose":
		return key + ".keypoints", "belongs to pose: only a pose output has keypoints"
	case len(d.Keypoints) > 0 && (len(d.Keypoints) != 2 || d.Keypoints[0] < 1 || d.Keypoints[1] != 2 && d.Keypoints[1] != 3):
		return key + ".keypoints", "takes [keypoints, 2 or 3] (x, y and, with 3, a score per keypoint)"
	}
	return "", ""
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
			if d, kind := o.Detection(); d != nil && o.kinds() == 1 {
				if k, why := d.check(key+"."+kind, kind); k != "" {
					return k, why
				}
				continue
			}
			switch {
			case o.kinds() == 0:
				return key, "declares nothing: add classify:, ctc:, detect:, segment: or pose:, or remove it"
			case o.kinds() > 1:
				return key, "declares more than one of classify, ctc, detect, segment and pose: an output has one meaning"
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
