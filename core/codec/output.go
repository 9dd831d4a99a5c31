package codec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// buildOutput resolves one output's declaration; legacy is the model
// entry's labels: list for the output, the default labels of classify.
func buildOutput(name string, decl config.ModelOutput, legacy []string, info core.ModelInfo, images []*Image) (*Output, error) {
	k := slices.IndexFunc(info.Outputs, func(o core.OutputSpec) bool { return o.Name == name })
	if k < 0 {
		return nil, fmt.Errorf("outputs.%s: the model has no output '%s'; its outputs are %s", name, name, outputNames(info))
	}
	spec := info.Outputs[k]
	if spec.Kind != core.KindTensor && spec.Kind != "" {
		return nil, fmt.Errorf("outputs.%s: output '%s' is a %s, not a tensor of scores", name, name, spec.Type)
	}
	switch spec.Type {
	case "float32", "float64", "float16", "bfloat16":
	default:
		return nil, fmt.Errorf("outputs.%s: output '%s' holds %s, not scores (float32, float64, float16 or bfloat16)", name, name, spec.Type)
	}
	if d, kind := decl.Detection(); d != nil {
		return buildDetection(name, k, *d, kind, legacy, info, images)
	}
	if decl.Classify != nil {
		return buildClassify(name, k, *decl.Classify, legacy, spec, info.Metadata)
	}
	return buildCTC(name, k, *decl.CTC, spec)
}

func buildClassify(name string, k int, decl config.Classify, legacy []string, spec core.OutputSpec, meta map[string]string) (*Output, error) {
	key := "outputs." + name + ".classify"
	labels, from, err := classLabels(decl.Labels, legacy, meta)
	if err != nil {
		return nil, fmt.Errorf("%s.labels: %w", key, err)
	}
	if r := len(spec.Shape); spec.Shape != nil && (r < 1 || r > 3 || r == 3 && spec.Shape[1] != 1 && spec.Shape[1] >= 0) {
		return nil, fmt.Errorf("%s: output '%s' has shape %s; classify takes [N, classes] (or [classes], [N, 1, classes])", key, name, tensor.FormatShape(spec.Shape))
	}
	classes := int64(-1)
	if len(spec.Shape) > 0 {
		classes = spec.Shape[len(spec.Shape)-1]
	}
	if classes >= 0 && int64(len(labels)) > classes {
		return nil, fmt.Errorf("%s.labels: %d labels (%s) for %d classes", key, len(labels), from, classes)
	}
	c := &decode.Classifier{Softmax: decl.Softmax != nil && *decl.Softmax, TopK: max(decl.TopK, 1), Labels: labels}
	if classes >= 0 {
		c.TopK = min(c.TopK, int(classes))
	}
	d := fmt.Sprintf("classification: the top %d classes per item with label, index and score", c.TopK)
	if c.Softmax {
		d += " (softmax applied)"
	}
	if len(labels) > 0 {
		d += "; labels " + from + ": " + preview(labels, 8)
	}
	return &Output{Name: name, Index: k, Kind: KindClassify, classify: c, describe: d}, nil
}

// classLabels picks classify's labels: its own, the model entry's labels:
// list, the model's metadata, in that order.
func classLabels(l config.Labels, legacy []string, meta map[string]string) ([]string, string, error) {
	switch {
	case l.File != "":
		labels, err := decode.LoadLabels(l.File)
		return labels, "from " + l.File, err
	case len(l.List) > 0:
		return l.List, "from svc.yml", nil
	case len(legacy) > 0:
		return legacy, "from the model's labels: in svc.yml", nil
	}
	if labels, key, ok := decode.LabelsFromMetadata(meta); ok {
		return labels, "from the model's metadata (" + key + ")", nil
	}
	return nil, "", nil
}

func buildCTC(name string, k int, decl config.CTC, spec core.OutputSpec) (*Output, error) {
	key := "outputs." + name + ".ctc"
	labels := decl.Labels.List
	from := "from svc.yml"
	if decl.Labels.File != "" {
		var err error
		if labels, err = decode.LoadLabels(decl.Labels.File); err != nil {
			return nil, fmt.Errorf("%s.labels: %w", key, err)
		}
		from = "from " + decl.Labels.File
	}
	if spec.Shape != nil && len(spec.Shape) != 3 {
		return nil, fmt.Errorf("%s: output '%s' has shape %s; ctc takes [N, steps, classes]", key, name, tensor.FormatShape(spec.Shape))
	}
	c := &decode.CTC{Labels: labels, Blank: decl.Blank, Space: decl.Space}
	if spec.Shape != nil && spec.Shape[2] >= 0 {
		classes := spec.Shape[2]
		withSpace := int64(len(labels)) + 2
		switch {
		case decl.Space == nil && classes != withSpace && classes != withSpace-1,
			decl.Space != nil && *decl.Space && classes != withSpace,
			decl.Space != nil && !*decl.Space && classes != withSpace-1:
			return nil, fmt.Errorf("%s.labels: %d labels (%s) do not fit %d classes: want the classes to be the blank and the labels (%d), or those and a space (%d)", key, len(labels), from, classes, withSpace-1, withSpace)
		}
		if decl.Blank >= int(classes) {
			return nil, fmt.Errorf("%s.blank: %d is past the %d classes", key, decl.Blank, classes)
		}
	}
	d := fmt.Sprintf("text: greedy CTC decoding per item (blank %d, %d labels %s), with the mean score of its characters", decl.Blank, len(labels), from)
	return &Output{Name: name, Index: k, Kind: KindCTC, ctc: c, describe: d}, nil
}

// preview lists up to n labels.
func preview(labels []string, n int) string {
	if len(labels) <= n {
		return strings.Join(labels, ", ")
	}
	return strings.Join(labels[:n], ", ") + fmt.Sprintf(", … (%d in all)", len(labels))
}
