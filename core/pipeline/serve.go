package pipeline

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// The served page reader's input and output: the pictures' encoded
// bytes in, each page's JSON out.
const (
	InputName  = "image"
	OutputName = "pages"
)

// OpenStage schedules the model of svc.yml's entry model as the server
// schedules a model it serves alone.
type OpenStage func(model string) (core.Schedule, error)

// Scheduler is the core.Scheduler of a pipeline entry (models.NAME):
// it schedules each stage's model with open and serves the page reader
// over them as one model. The Opener Schedule is given is not used: each
// stage opens its own model.
type Scheduler struct {
	Name   string
	Config config.Config
	Open   OpenStage
	Limits image.Limits
	// MaxRequestPixels caps the pixels of one request's pictures
	// together, from their headers (limits.max_request_pixels; 0: none).
	MaxRequestPixels int64
	// Observe is told of each stage's runs and each page read (nil:
	// nothing is).
	Observe Observer
}

// Schedule opens the stages and returns the page reader over them; a
// stage that fails names its key.
func (s Scheduler) Schedule(core.Opener) (core.Schedule, error) {
	p := s.Config.Models[s.Name].Pipeline
	if p == nil {
		return nil, fmt.Errorf("models.%s is no pipeline", s.Name)
	}
	key := "models." + s.Name + ".pipeline."
	sv := &Served{name: s.Name, lim: s.Limits, maxPixels: s.MaxRequestPixels, obs: s.Observe}
	fail := func(err error) (core.Schedule, error) {
		_ = sv.Close()
		return nil, err
	}
	open := func(stage, name, model string) (core.Runner, error) {
		r, err := s.Open(model)
		if err != nil {
			return nil, fmt.Errorf("%s%s.model (%q): %w", key, stage, model, err)
		}
		sv.stages = append(sv.stages, r)
		return observe(r, name, s.Observe), nil
	}
	var st Stages
	var err error
	if st.Detect, err = open("detect", StageDetector, p.Detect.Model); err != nil {
		return fail(err)
	}
	if p.Classify != nil {
		if st.Classify, err = open("classify", StageClassifier, p.Classify.Model); err != nil {
			return fail(err)
		}
	}
	if st.Recognize, err = open("recognize", StageRecognizer, p.Recognize.Model); err != nil {
		return fail(err)
	}
	if st.Labels, err = ctcLabels(s.Config.Models[p.Recognize.Model]); err != nil {
		return fail(fmt.Errorf("%srecognize.model (%q): %w", key, p.Recognize.Model, err))
	}
	ocr, err := NewOCR(st, OCRFromConfig(p))
	if err != nil {
		var se *StageError
		if errors.As(err, &se) {
			return fail(fmt.Errorf("%s%s.model: %w", key, se.Stage, err))
		}
		return fail(fmt.Errorf("%s: %w", key[:len(key)-1], err))
	}
	sv.ocr = ocr
	return sv, nil
}

// ctcLabels are the characters of the recogniser's ctc output.
func ctcLabels(m config.Model) ([]string, error) {
	for _, o := range m.Outputs {
		if o.CTC == nil {
			continue
		}
		if o.CTC.Labels.File != "" {
			return decode.LoadLabels(o.CTC.Labels.File)
		}
		return o.CTC.Labels.List, nil
	}
	return nil, errors.New("no ctc output declared")
}

// Served is the page reader served as one model: one input, the pictures'
// encoded bytes ([N] BYTES), one output, each page's JSON ([N] BYTES).
type Served struct {
	name   string
	lim    image.Limits
	ocr    *OCR
	stages []core.Schedule
	obs    Observer
	// maxPixels is limits.max_request_pixels (0: none).
	maxPixels int64
}

var _ core.Schedule = (*Served)(nil)

// Info describes the page reader: a picture in, a page's lines out.
func (s *Served) Info() core.ModelInfo {
	return core.ModelInfo{
		Name: s.name, Format: "pipeline",
		Inputs: []core.InputSpec{{Name: InputName, Type: tensor.String.String(), Shape: []int64{-1}, Required: true, Pictures: true,
			Description: "the pictures, encoded (JPEG, PNG, WebP, GIF, BMP)"}},
		Outputs: []core.OutputSpec{{Name: OutputName, Type: tensor.String.String(), Shape: []int64{-1}, JSON: true,
			Description: `each page read, as JSON: {"lines": [{"box", "text", "score"}], "text"}`}},
		Metadata:   map[string]string{"pipeline": "ocr"},
		Parameters: s.ocr.Settings().Parameters(),
	}
}

// Specs is the one input.
func (s *Served) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: InputName, DType: tensor.String, Shape: []int64{-1}}}
}

// Predict reads each picture of inputs[0] with the settings and the
// request's overrides (core.ParamsOf).
func (s *Served) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, &core.InputError{Input: InputName, Message: fmt.Sprintf("Input '%s' is required: the pictures", InputName)}
	}
	pics, ok := inputs[0].Data.([]string)
	if !ok {
		return nil, &core.InputError{Input: InputName, Message: fmt.Sprintf("Input '%s' takes the pictures' bytes (BYTES), got %s", InputName, inputs[0].DType)}
	}
	set, err := s.ocr.Settings().With(core.ParamsOf(ctx))
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			return nil, &core.InputError{Input: pe.Name, Message: err.Error()}
		}
		return nil, err
	}
	data, err := s.pictures(pics)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(pics))
	for i, p := range data {
		pg, err := s.read(ctx, p, set)
		if err != nil {
			return nil, s.refusal(err, i, len(pics))
		}
		if s.obs != nil {
			s.obs.PageRead(len(pg.Lines))
		}
		b, err := json.Marshal(pg)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return core.NewResult([]*tensor.Tensor{{DType: tensor.String, Shape: []int64{int64(len(out))}, Data: out}}), nil
}

// pictures are the encoded pictures the elements carry, refused as an
// image input's are before any is decoded when their headers' pixels
// together pass limits.max_request_pixels.
func (s *Served) pictures(pics []string) ([][]byte, error) {
	data := make([][]byte, len(pics))
	var pixels int64
	for i, p := range pics {
		data[i] = PictureBytes([]byte(p))
		if s.maxPixels <= 0 {
			continue
		}
		w, h, err := image.Size(data[i], s.lim)
		if err != nil {
			return nil, s.refusal(err, i, len(pics))
		}
		pixels += int64(w) * int64(h)
	}
	if s.maxPixels > 0 && pixels > s.maxPixels {
		return nil, &core.LimitError{Key: "limits.max_request_pixels", Message: fmt.Sprintf("Input '%s': pictures of %d pixels together, more than the %d one request may send (limits.max_request_pixels)", InputName, pixels, s.maxPixels)}
	}
	return data, nil
}

// read decodes one picture once (after its header has passed the
// limits) and reads it; a request that asks for the picture drawn on
// keeps the decoded picture for the drawing (codec.KeepDecoded).
func (s *Served) read(ctx context.Context, data []byte, set OCRSettings) (Page, error) {
	px, err := image.Decode(ctx, data, 3, s.lim)
	if err != nil {
		return Page{}, err
	}
	kept, err := codec.KeepDecoded(ctx, px)
	if !kept {
		defer px.Free()
	}
	if err != nil {
		return Page{}, err
	}
	return s.ocr.ReadPixels(ctx, px, set)
}

// PictureBytes is the encoded picture a BYTES element carries: the
// element itself when it starts as an image file does, else the base64
// (standard or URL-safe, padded or not) or data: URL it holds; anything
// else is returned as it is, for the decoder to refuse.
func PictureBytes(b []byte) []byte {
	if _, ok := image.Sniff(b); ok {
		return b
	}
	s := string(b)
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		if meta, data, found := strings.Cut(rest, ","); found && strings.HasSuffix(meta, ";base64") {
			s = data
		}
	}
	s = strings.TrimRight(strings.Join(strings.Fields(s), ""), "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	if p, err := enc.DecodeString(s); err == nil && len(p) > 0 {
		return p
	}
	return b
}

// refusal is a picture's decoding error as the image inputs word it (a
// 400 naming the input and, among several, the item); other errors pass.
func (s *Served) refusal(err error, i, n int) error {
	var ie *image.Error
	if !errors.As(err, &ie) {
		return err
	}
	if n == 1 {
		return &core.InputError{Input: InputName, Message: fmt.Sprintf("Input '%s': %s", InputName, ie.Msg)}
	}
	return &core.InputError{Input: InputName, Message: fmt.Sprintf("Input '%s', item %d: %s", InputName, i, ie.Msg)}
}

// Provider is the detector's.
func (s *Served) Provider() core.Provider { return s.stages[0].Provider() }

// Stats sums the stages' queues and sessions.
func (s *Served) Stats() core.SchedStats {
	var st core.SchedStats
	for _, r := range s.stages {
		x := r.Stats()
		st.Queued += x.Queued
		st.Sessions += x.Sessions
		st.BatchLimit = max(st.BatchLimit, x.BatchLimit)
		st.GoProcs = x.GoProcs
	}
	return st
}

// Close closes every stage.
func (s *Served) Close() error {
	var errs []error
	for _, r := range s.stages {
		errs = append(errs, r.Close())
	}
	s.stages = nil
	return errors.Join(errs...)
}
