package pipeline

import (
	"fmt"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/page"
	"github.com/svc-dev/svc/core/config"
)

// OCRFromConfig is the page reader's settings as svc.yml's pipeline entry
// gives them, PaddleOCR's defaults where it gives none.
func OCRFromConfig(p *config.Pipeline) OCRSettings {
	s := DefaultOCR
	if d := p.Detect; d != nil {
		if d.LimitSideLen > 0 {
			s.LimitSideLen = d.LimitSideLen
		}
		if d.LimitType != "" {
			s.LimitType = page.LimitType(d.LimitType)
		}
		setFloat(&s.DB.Thresh, d.Thresh)
		setFloat(&s.DB.BoxThresh, d.BoxThresh)
		setFloat(&s.DB.UnclipRatio, d.UnclipRatio)
		if d.MaxCandidates > 0 {
			s.DB.MaxCandidates = d.MaxCandidates
		}
		s.DB.Dilate = d.Dilation
	}
	s.Classify = p.Classify != nil && !p.Classify.Off
	if c := p.Classify; c != nil {
		setFloat(&s.ClsThresh, c.Thresh)
	}
	if r := p.Recognize; r != nil {
		if r.Batch > 0 {
			s.RecBatch = r.Batch
		}
		setFloat(&s.TextScore, r.TextScore)
	}
	return s
}

func setFloat(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

// ParamError is a request's override that the page reader refuses: the
// protocols answer it with a 400 naming the parameter.
type ParamError struct {
	Name, Msg string
}

func (e *ParamError) Error() string { return "parameter " + e.Name + ": " + e.Msg }

// Overrides are the settings a request may change: the others shape the
// models' inputs and stay as configured.
var Overrides = []string{"box_thresh", "unclip_ratio", "text_score", "classify"}

// Parameters describe the Overrides a request may give, with s's values
// as their defaults (ModelInfo.Parameters: /openapi.json lists them).
func (s OCRSettings) Parameters() []core.Parameter {
	return []core.Parameter{
		{Name: "box_thresh", Type: "number", Min: 0, Max: 1,
			Doc: fmt.Sprintf("The least score (the detector's mean probability under the box) a text box is kept with, from 0 to 1; default %g.", s.DB.BoxThresh)},
		{Name: "unclip_ratio", Type: "number", Min: 0, Max: 10, MinExclusive: true,
			Doc: fmt.Sprintf("How far each box is grown around its text (area × ratio / perimeter), over 0 and at most 10; default %g.", s.DB.UnclipRatio)},
		{Name: "text_score", Type: "number", Min: 0, Max: 1,
			Doc: fmt.Sprintf("The least recognition score a line is answered with, from 0 to 1; default %g.", s.TextScore)},
		{Name: "classify", Type: "boolean",
			Doc: fmt.Sprintf("Whether to run the orientation classifier and turn upside-down lines over (when the pipeline has one); default %t.", s.Classify)},
	}
}

// With returns s with a request's overrides (query string or v2
// parameters, as text), each checked; unknown names are not its concern.
func (s OCRSettings) With(params map[string]string) (OCRSettings, error) {
	unit := func(name string, dst *float64) error {
		v, ok := params[name]
		if !ok {
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return &ParamError{Name: name, Msg: fmt.Sprintf("%q is not a number within 0-1", v)}
		}
		*dst = f
		return nil
	}
	if err := unit("box_thresh", &s.DB.BoxThresh); err != nil {
		return s, err
	}
	if err := unit("text_score", &s.TextScore); err != nil {
		return s, err
	}
	if v, ok := params["unclip_ratio"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 10) {
			return s, &ParamError{Name: "unclip_ratio", Msg: fmt.Sprintf("%q is not a number over 0 and at most 10", v)}
		}
		s.DB.UnclipRatio = f
	}
	if v, ok := params["classify"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, &ParamError{Name: "classify", Msg: fmt.Sprintf("%q is not true or false", v)}
		}
		s.Classify = b
	}
	return s, nil
}
