package codec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/detect"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// Kinds of detection outputs.
const (
	KindDetect  = "detect"
	KindSegment = "segment"
	KindPose    = "pose"
)

// detector is a detection output's decoding: the decoder, its settings
// from svc.yml, and where its pictures and prototype masks come from.
type detector struct {
	dec    *detect.Decoder
	params detect.Params
	// protos is the prototype masks' output (segment), -1 for none.
	protos int
	// input is the input whose pictures the boxes are of, -1 for none;
	// fallback the frame of an item the client sent as a tensor.
	input    int
	fallback image.Frame
}

// IsDetection reports whether the output answers boxes (detect, segment
// or pose).
func (o *Output) IsDetection() bool { return o.det != nil }

// buildDetection resolves a detect, segment or pose declaration against
// the model; images are the model's image inputs.
func buildDetection(name string, k int, decl config.Detect, kind string, legacy []string, info core.ModelInfo, images []*Image) (*Output, error) {
	key := "outputs." + name + "." + kind
	labels, from, err := classLabels(decl.Labels, legacy, info.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%s.labels: %w", key, err)
	}
	spec := detect.Spec{Shape: info.Outputs[k].Shape, Task: detect.Task(kind), Layout: detect.Layout(decl.Layout), Classes: len(labels), Metadata: info.Metadata}
	d := &detector{protos: -1, input: -1}
	switch kind {
	case KindSegment:
		if d.protos, spec.Masks, err = protosOutput(name, k, decl.Protos, info); err != nil {
			return nil, fmt.Errorf("%s.protos: %w", key, err)
		}
	case KindPose:
		if spec.Keypoints, spec.KeypointDims, err = keypointShape(decl.Keypoints, info.Metadata); err != nil {
			return nil, fmt.Errorf("%s.keypoints: %w", key, err)
		}
	}
	head, err := detect.Resolve(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: output '%s' %w", key, name, err)
	}
	if d.input, d.fallback, err = detectionInput(decl.Input, info, images); err != nil {
		return nil, fmt.Errorf("%s.input: %w", key, err)
	}
	d.dec = &detect.Decoder{Head: head, Labels: labels}
	d.params = detect.Defaults()
	if decl.Confidence != nil {
		d.params.Confidence = *decl.Confidence
	}
	if decl.IoU != nil {
		d.params.IoU = *decl.IoU
	}
	if decl.MaxDet > 0 {
		d.params.MaxDet = decl.MaxDet
	}
	d.params.Agnostic = decl.Agnostic
	if len(decl.Classes) > 0 {
		d.params.Classes = slices.Clone(decl.Classes)
	}
	if err := checkClasses(d.params.Classes, head.Classes); err != nil {
		return nil, fmt.Errorf("%s.classes: %w", key, err)
	}
	return &Output{Name: name, Index: k, Kind: kind, det: d, describe: describeDetection(head, d, labels, from)}, nil
}

// protosOutput finds a segment output's prototype masks: the output
// named, or the model's one other output of rank 4; masks is its channel
// dimension (the coefficients per box).
func protosOutput(name string, k int, named string, info core.ModelInfo) (int, int, error) {
	idx := -1
	if named != "" {
		idx = slices.IndexFunc(info.Outputs, func(o core.OutputSpec) bool { return o.Name == named })
		if idx < 0 {
			return -1, 0, fmt.Errorf("the model has no output '%s'; its outputs are %s", named, outputNames(info))
		}
	} else {
		for i, o := range info.Outputs {
			if i != k && len(o.Shape) == 4 {
				if idx >= 0 {
					return -1, 0, fmt.Errorf("outputs '%s' and '%s' are both of rank 4: name the prototype masks' output", info.Outputs[idx].Name, o.Name)
				}
				idx = i
			}
		}
		if idx < 0 {
			return -1, 0, fmt.Errorf("output '%s' needs the prototype masks [N, masks, height, width], and no other output has rank 4 (its outputs are %s)", name, outputNames(info))
		}
	}
	o := info.Outputs[idx]
	if idx == k || len(o.Shape) != 4 || o.Shape[1] < 1 {
		return -1, 0, fmt.Errorf("output '%s' has shape %s: prototype masks are [N, masks, height, width] with a fixed number of masks", o.Name, tensor.FormatShape(o.Shape))
	}
	return idx, int(o.Shape[1]), nil
}

// keypointShape is pose's keypoints: declared, or the metadata's
// kpt_shape.
func keypointShape(decl []int, meta map[string]string) (int, int, error) {
	if len(decl) == 2 {
		return decl[0], decl[1], nil
	}
	n, dims, ok := detect.KeypointShape(meta)
	if !ok {
		return 0, 0, fmt.Errorf("the model's metadata has no kpt_shape: declare keypoints: [count, 2 or 3]")
	}
	return n, dims, nil
}

// detectionInput is the input whose pictures a detection output's boxes
// are of: the one named, or the model's one image input, or with none
// the first input of rank 4; fallback is the frame of an item sent as a
// tensor (the input's fixed size; zero when dynamic).
func detectionInput(named string, info core.ModelInfo, images []*Image) (int, image.Frame, error) {
	var in *core.InputSpec
	idx := -1
	switch {
	case named != "":
		idx = slices.IndexFunc(info.Inputs, func(s core.InputSpec) bool { return s.Name == named })
		if idx < 0 {
			return -1, image.Frame{}, fmt.Errorf("the model has no input '%s'; its inputs are %s", named, inputNames(info))
		}
	case len(images) > 1:
		names := make([]string, len(images))
		for i, im := range images {
			names[i] = "'" + im.Name + "'"
		}
		return -1, image.Frame{}, fmt.Errorf("the model has image inputs %s: name the one the boxes are of", strings.Join(names, ", "))
	case len(images) == 1:
		idx = images[0].Index
	default:
		idx = slices.IndexFunc(info.Inputs, func(s core.InputSpec) bool { return len(s.Shape) == 4 })
	}
	if idx < 0 {
		return -1, image.Frame{}, nil
	}
	in = &info.Inputs[idx]
	for _, im := range images {
		if im.Index == idx {
			s := im.Plan.Resolved().Size
			return idx, image.Identity(s[1], s[0]), nil
		}
	}
	if len(in.Shape) != 4 {
		return idx, image.Frame{}, nil
	}
	h, w := in.Shape[2], in.Shape[3]
	if in.Shape[3] == 1 || in.Shape[3] == 3 {
		h, w = in.Shape[1], in.Shape[2]
	}
	return idx, image.Identity(int(max(w, 0)), int(max(h, 0))), nil
}

// checkClasses refuses class indices past the classes.
func checkClasses(classes []int, n int) error {
	for _, c := range classes {
		if c < 0 || n > 0 && c >= n {
			return fmt.Errorf("class %d is not one of the model's %d classes (0 to %d)", c, n, n-1)
		}
	}
	return nil
}

// describeDetection says in one line what a detection output answers.
func describeDetection(h detect.Head, d *detector, labels []string, from string) string {
	var b strings.Builder
	what := map[detect.Task]string{
		detect.Detect:  "boxes",
		detect.Segment: "boxes with their masks (polygon; COCO RLE with ?rle=true)",
		detect.Pose:    fmt.Sprintf("boxes with %d keypoints each", h.Keypoints),
	}[h.Task]
	fmt.Fprintf(&b, "%s: per picture, its %s in the picture's pixels, best first, from the %s layout (%d classes)", h.Task, what, h.Layout, h.Classes)
	p := d.params
	fmt.Fprintf(&b, "; confidence > %g, IoU %g, at most %d", p.Confidence, p.IoU, p.MaxDet)
	if p.Agnostic {
		b.WriteString(", class-agnostic suppression")
	}
	if p.Classes != nil {
		fmt.Fprintf(&b, ", classes %v", p.Classes)
	}
	if len(labels) > 0 {
		b.WriteString("; labels " + from + ": " + preview(labels, 8))
	}
	return b.String()
}

// Detector is a detection model svc recognises by what it says of
// itself: an Ultralytics export, whose metadata names its task (detect,
// segment or pose), its class names and its input size (imgsz).
type Detector struct {
	// Task is detect, segment or pose.
	Task string
	// Input is the image input; Size its [height, width].
	Input string
	Size  [2]int
	// Output is the output of boxes (the first of rank 3).
	Output string
}

// RecogniseDetector tells a detection model from its metadata and its
// inputs: task detect, segment or pose, class names, one float input of
// rank 4 with 3 channels, an output of rank 3 (and for segment one of rank
// 4). The size is the metadata's imgsz, else the input's fixed size.
func RecogniseDetector(info core.ModelInfo) (Detector, bool) {
	meta := info.Metadata
	task := strings.TrimSpace(meta["task"])
	if task != KindDetect && task != KindSegment && task != KindPose || len(info.Inputs) != 1 {
		return Detector{}, false
	}
	if _, _, ok := decode.LabelsFromMetadata(meta); !ok {
		return Detector{}, false
	}
	in := info.Inputs[0]
	if len(in.Shape) != 4 || in.Shape[1] != 3 || in.Type != "float32" && in.Type != "float16" {
		return Detector{}, false
	}
	d := Detector{Task: task, Input: in.Name}
	if h, w, ok := detect.InputSize(meta); ok {
		d.Size = [2]int{h, w}
	} else if in.Shape[2] > 0 && in.Shape[3] > 0 {
		d.Size = [2]int{int(in.Shape[2]), int(in.Shape[3])}
	} else {
		return Detector{}, false
	}
	for _, o := range info.Outputs {
		if len(o.Shape) == 3 {
			d.Output = o.Name
			break
		}
	}
	if d.Output == "" {
		return Detector{}, false
	}
	return d, true
}

// autoDetection is the declaration of a detection model served with
// nothing declared: its input an image input (the yolo preset at its
// size), its output of boxes decoded.
func autoDetection(info core.ModelInfo) (config.Model, bool) {
	d, ok := RecogniseDetector(info)
	if !ok {
		return config.Model{}, false
	}
	out := config.ModelOutput{}
	switch d.Task {
	case KindDetect:
		out.Detect = &config.Detect{}
	case KindSegment:
		out.Segment = &config.Detect{}
	default:
		out.Pose = &config.Detect{}
	}
	return config.Model{
		Inputs:  map[string]config.ModelInput{d.Input: {Image: &config.ImageInput{Preset: "yolo", Size: []int{d.Size[0], d.Size[1]}}}},
		Outputs: map[string]config.ModelOutput{d.Output: out},
	}, true
}
