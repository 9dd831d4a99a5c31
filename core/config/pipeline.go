package config

import (
	"fmt"
	"slices"
)

// Pipeline is a model made of models (models.NAME.pipeline): its stages
// name other entries of models, each loaded and scheduled as a model of
// its own. Kind says which pipeline; ocr, the page reader, is the one
// there is.
type Pipeline struct {
	Kind      string          `yaml:"kind"`
	Detect    *DetectStage    `yaml:"detect"`
	Classify  *ClassifyStage  `yaml:"classify"`
	Recognize *RecognizeStage `yaml:"recognize"`
}

// DetectStage is the page reader's text detector and the reading of its
// map (PaddleOCR's DetResizeForTest and DBPostProcess). Nil numbers take
// PaddleOCR's defaults.
type DetectStage struct {
	Model         string   `yaml:"model"`
	LimitSideLen  int      `yaml:"limit_side_len"` // 960
	LimitType     string   `yaml:"limit_type"`     // max, min or resize_long
	Thresh        *float64 `yaml:"thresh"`         // 0.3
	BoxThresh     *float64 `yaml:"box_thresh"`     // 0.6
	UnclipRatio   *float64 `yaml:"unclip_ratio"`   // 1.5
	MaxCandidates int      `yaml:"max_candidates"` // 1000
	Dilation      bool     `yaml:"dilation"`
}

// ClassifyStage is the page reader's optional orientation classifier.
type ClassifyStage struct {
	Model string `yaml:"model"`
	// Thresh: a crop labelled 180 with a score over it is turned over (0.9).
	Thresh *float64 `yaml:"thresh"`
	// Off keeps the classifier loaded but does not run it unless a
	// request asks for it (classify=true).
	Off bool `yaml:"off"`
}

// RecognizeStage is the page reader's recogniser; its characters are
// those of its model's ctc output.
type RecognizeStage struct {
	Model     string   `yaml:"model"`
	Batch     int      `yaml:"batch"`      // 1
	TextScore *float64 `yaml:"text_score"` // 0.5
}

// PipelineKinds are the pipelines svc knows.
var PipelineKinds = []string{"ocr"}

// checkPipeline checks the pipeline of models.name: its kind, that each
// stage names another model of the file that is no pipeline, and its
// settings' ranges.
func (c *Config) checkPipeline(name string, p *Pipeline) (string, string) {
	key := "models." + name + ".pipeline"
	if !slices.Contains(PipelineKinds, p.Kind) {
		return key + ".kind", fmt.Sprintf("must be one of %v; got %q", PipelineKinds, p.Kind)
	}
	if p.Detect == nil {
		return key + ".detect", "is required: the text detector"
	}
	if p.Recognize == nil {
		return key + ".recognize", "is required: the recogniser"
	}
	stages := []struct {
		key, model string
	}{{key + ".detect.model", p.Detect.Model}, {key + ".recognize.model", p.Recognize.Model}}
	if p.Classify != nil {
		stages = append(stages, struct{ key, model string }{key + ".classify.model", p.Classify.Model})
	}
	for _, s := range stages {
		m, ok := c.Models[s.model]
		switch {
		case s.model == "":
			return s.key, "is required: the name of a model of this file"
		case s.model == name:
			return s.key, "names the pipeline itself"
		case !ok:
			return s.key, fmt.Sprintf("names %q, which is no model of this file", s.model)
		case m.Pipeline != nil:
			return s.key, fmt.Sprintf("names %q, a pipeline: a stage is one model", s.model)
		}
	}
	if !c.Models[p.Recognize.Model].hasCTC() {
		return key + ".recognize.model", fmt.Sprintf("names %q, which declares no ctc output: its characters come from outputs.NAME.ctc.labels", p.Recognize.Model)
	}
	return p.checkSettings(key)
}

// hasCTC says whether the model declares a ctc output.
func (m Model) hasCTC() bool {
	for _, o := range m.Outputs {
		if o.CTC != nil {
			return true
		}
	}
	return false
}

func (p *Pipeline) checkSettings(key string) (string, string) {
	d, r := p.Detect, p.Recognize
	unit := func(v *float64) bool { return v == nil || (*v >= 0 && *v <= 1) }
	switch {
	case d.LimitSideLen < 0:
		return key + ".detect.limit_side_len", "cannot be negative (0: 960)"
	case d.LimitType != "" && d.LimitType != "max" && d.LimitType != "min" && d.LimitType != "resize_long":
		return key + ".detect.limit_type", fmt.Sprintf("must be one of max, min, resize_long; got %q", d.LimitType)
	case !unit(d.Thresh):
		return key + ".detect.thresh", "must be within 0-1"
	case !unit(d.BoxThresh):
		return key + ".detect.box_thresh", "must be within 0-1"
	case d.UnclipRatio != nil && !(*d.UnclipRatio > 0):
		return key + ".detect.unclip_ratio", "must be positive"
	case d.MaxCandidates < 0:
		return key + ".detect.max_candidates", "cannot be negative (0: 1000)"
	case p.Classify != nil && !unit(p.Classify.Thresh):
		return key + ".classify.thresh", "must be within 0-1"
	case r.Batch < 0:
		return key + ".recognize.batch", "cannot be negative (0: 1)"
	case !unit(r.TextScore):
		return key + ".recognize.text_score", "must be within 0-1"
	}
	return "", ""
}
