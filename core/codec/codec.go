// Package codec turns what users hold into the served model's inputs, and
// the model's outputs into what they mean, as svc.yml declares for the
// model (models.<name>.inputs and .outputs): encoded pictures into an
// image input's tensor (core/codec/image), texts into token ids
// (core/codec/tokenizer), class scores into labels and per-step scores
// into text (core/codec/decode).
//
// It sits below the protocols and above the ONNX Runtime boundary, which
// it never imports: the v1 JSON API, the Open
// Inference Protocol's REST and gRPC codecs and the OpenAPI document all
// ask the same Set, built once per loaded model, so an input is an image
// input, and an output has its meaning, in every protocol alike.
package codec

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// Codec builds the Set of the served model once it has loaded.
type Codec struct {
	decl      config.Model
	legacy    map[string][]string
	lim       config.Limits
	modelFile string
	// paint draws the answers of a model whose runner decodes its
	// pictures itself (PaintWith; nil: none).
	paint Painter

	// batches is told of each run of texts (ObserveBatches).
	batches atomic.Pointer[func(TextBatch)]

	mu     sync.Mutex
	runner core.Runner
	set    *Set
	err    error
}

// New returns the codec of a model declared as decl (the zero Model for a
// model served from a path or the registry: nothing declared); lim bounds
// what one request's pictures and texts may cost (a zero field of lim
// bounds nothing, but for MaxImagePixels, whose zero is its default).
func New(decl config.Model, lim config.Limits) *Codec {
	return &Codec{decl: decl, legacy: decl.Labels, lim: lim}
}

// ModelFile tells the codec the path of the model file it serves, where
// it looks for a tokenizer.json (beside it or in the folder above) and
// the sentence-transformers files; it returns c.
func (c *Codec) ModelFile(path string) *Codec {
	c.modelFile = path
	return c
}

// ObserveBatches has f told of each run of texts, its size and tokens
// (the metrics).
func (c *Codec) ObserveBatches(f func(TextBatch)) { c.batches.Store(&f) }

// HasText reports whether the model last loaded takes text.
func (c *Codec) HasText() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set.Text() != nil
}

func (c *Codec) observeBatch(b TextBatch) {
	if f := c.batches.Load(); f != nil {
		(*f)(b)
	}
}

// For returns the Set of the model r runs, built on the first call for r;
// every protocol's Prepare asks it, so a declaration that does not fit
// the model fails start-up with one message.
func (c *Codec) For(r core.Runner) (*Set, error) {
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runner != r {
		file := c.modelFile
		if p := r.Info().Path; p != "" {
			// A reload may load the model from another file (a new
			// snapshot): its tokenizer is beside that one.
			file = p
		}
		c.set, c.err = build(c.decl, c.lim, file, r.Info(), r.Specs())
		if c.err == nil {
			c.set = withOwnPictures(c.set, r.Info(), c.lim, c.paint)
		}
		c.runner = r
		if x := c.set.Text(); x != nil {
			x.start(r, c.observeBatch)
		}
	}
	return c.set, c.err
}

// Set is what the loaded model's declarations mean: its image inputs and
// its decoded outputs; and the input whose runner decodes its pictures
// itself (a pipeline's), with what draws its answers (own.go). A nil *Set declares nothing; its methods answer
// accordingly.
type Set struct {
	images  []*Image
	outputs []*Output
	text    *Text
	lim     config.Limits
	// own is the input whose runner decodes its pictures itself (nil:
	// none; own.go).
	own *ownInput
}

// Image is an image input.
type Image struct {
	// Name is the input's name; Index its position in the model's inputs.
	Name  string
	Index int
	Plan  *image.Plan
}

// Output is a decoded output.
type Output struct {
	// Name is the output's name; Index its position in the model's outputs.
	Name  string
	Index int
	// Kind is "classify", "ctc", "detect", "segment" or "pose".
	Kind     string
	classify *decode.Classifier
	ctc      *decode.CTC
	det      *detector
	describe string
}

// Kinds of decoded outputs.
const (
	KindClassify = "classify"
	KindCTC      = "ctc"
)

// Empty reports whether the model declares nothing.
func (s *Set) Empty() bool {
	return s == nil || len(s.images) == 0 && len(s.outputs) == 0 && s.text == nil
}

// Text is the model's text inputs and embedding output, or nil.
func (s *Set) Text() *Text {
	if s == nil {
		return nil
	}
	return s.text
}

// Images lists the image inputs in input order.
func (s *Set) Images() []*Image {
	if s == nil {
		return nil
	}
	return s.images
}

// Image returns the image input named name, or nil.
func (s *Set) Image(name string) *Image {
	if s == nil {
		return nil
	}
	for _, im := range s.images {
		if im.Name == name {
			return im
		}
	}
	return nil
}

// ImageAt returns the image input at index k of the model's inputs, or
// nil.
func (s *Set) ImageAt(k int) *Image {
	if s == nil {
		return nil
	}
	for _, im := range s.images {
		if im.Index == k {
			return im
		}
	}
	return nil
}

// Outputs lists the decoded outputs in output order.
func (s *Set) Outputs() []*Output {
	if s == nil {
		return nil
	}
	return s.outputs
}

// Output returns the decoded output named name, or nil.
func (s *Set) Output(name string) *Output {
	if s == nil {
		return nil
	}
	for _, o := range s.outputs {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// OutputAt returns the decoded output at index i of the model's outputs,
// or nil.
func (s *Set) OutputAt(i int) *Output {
	if s == nil {
		return nil
	}
	for _, o := range s.outputs {
		if o.Index == i {
			return o
		}
	}
	return nil
}

// MaxPixels is the cap on an image's width × height.
func (s *Set) MaxPixels() int64 {
	if s == nil {
		return 0
	}
	return s.lim.ImagePixels()
}

// Describe says in one line what the input takes, for /info and OpenAPI.
func (im *Image) Describe() string { return im.Plan.Describe() }

// formatList is the accepted formats, for messages.
func formatList() string { return "accepted formats: " + strings.Join(image.Formats(), ", ") }

// Describe says in one line what the output answers, for /info and OpenAPI.
func (o *Output) Describe() string { return o.describe }

// AppendJSON appends the decoded output for the v1 API: per item, a
// top-k list of {"label","index","score"} (classify) or one
// {"text","score"} (ctc), in a JSON array over the batch.
func (o *Output) AppendJSON(dst []byte, t *tensor.Tensor) ([]byte, error) {
	switch o.Kind {
	case KindClassify:
		items, err := o.classify.Decode(t)
		if err != nil {
			return dst, o.wrap(err)
		}
		return decode.AppendClassesJSON(dst, items), nil
	case KindDetect, KindSegment, KindPose:
		return dst, o.wrap(errNeedsResult)
	default:
		texts, err := o.texts(t)
		if err != nil {
			return dst, err
		}
		return decode.AppendTextsJSON(dst, texts), nil
	}
}

// Strings is the decoded output as the Open Inference Protocol's BYTES
// tensor: [N, k] "score:index:label" strings for classify (Triton's
// classification extension), [N] texts for ctc.
func (o *Output) Strings(t *tensor.Tensor) ([]string, []int64, error) {
	switch o.Kind {
	case KindClassify:
		items, err := o.classify.Decode(t)
		if err != nil {
			return nil, nil, o.wrap(err)
		}
		k := 0
		if len(items) > 0 {
			k = len(items[0])
		}
		return decode.TritonClasses(items), []int64{int64(len(items)), int64(k)}, nil
	case KindDetect, KindSegment, KindPose:
		return nil, nil, o.wrap(errNeedsResult)
	default:
		texts, err := o.texts(t)
		if err != nil {
			return nil, nil, err
		}
		out := make([]string, len(texts))
		for i, tx := range texts {
			out[i] = tx.Text
		}
		return out, []int64{int64(len(out))}, nil
	}
}

// texts decodes a ctc output: the spaces at either end of a text go,
// since they read the margin around a line, not its words.
func (o *Output) texts(t *tensor.Tensor) ([]decode.Text, error) {
	texts, err := o.ctc.Decode(t)
	if err != nil {
		return nil, o.wrap(err)
	}
	for i := range texts {
		texts[i].Text = strings.Trim(texts[i].Text, " ")
	}
	return texts, nil
}

// errNeedsResult is a detection output decoded from its tensor alone: it
// needs the run's result and the request (Decoding).
var errNeedsResult = errors.New("a detection output is decoded with its request (Decoding)")

func (o *Output) wrap(err error) error {
	return fmt.Errorf("decode output '%s' (%s): %w", o.Name, o.Kind, err)
}

// build resolves the declarations against the loaded model.
func build(decl config.Model, lim config.Limits, modelFile string, info core.ModelInfo, specs []tensor.Spec) (*Set, error) {
	text, err := buildText(decl.Text, modelFile, specs, info)
	if err != nil {
		return nil, err
	}
	if len(decl.Inputs) == 0 && len(decl.Outputs) == 0 && text == nil {
		auto, ok := autoDetection(info)
		if !ok {
			return nil, nil
		}
		decl.Inputs, decl.Outputs = auto.Inputs, auto.Outputs
	}
	if text != nil {
		text.lim = lim
	}
	s := &Set{lim: lim, text: text}
	for _, name := range sortedKeys(decl.Inputs) {
		im, err := buildImage(name, *decl.Inputs[name].Image, info, specs)
		if err != nil {
			return nil, err
		}
		s.images = append(s.images, im)
	}
	sort.Slice(s.images, func(i, j int) bool { return s.images[i].Index < s.images[j].Index })
	for _, name := range sortedKeys(decl.Outputs) {
		o, err := buildOutput(name, decl.Outputs[name], decl.Labels[name], info, s.images)
		if err != nil {
			return nil, err
		}
		s.outputs = append(s.outputs, o)
	}
	sort.Slice(s.outputs, func(i, j int) bool { return s.outputs[i].Index < s.outputs[j].Index })
	return s, nil
}

func buildImage(name string, decl config.ImageInput, info core.ModelInfo, specs []tensor.Spec) (*Image, error) {
	key := "inputs." + name + ".image"
	k := slices.IndexFunc(specs, func(s tensor.Spec) bool { return s.Name == name })
	if k < 0 {
		return nil, fmt.Errorf("%s: the model has no input '%s'; its inputs are %s", key, name, inputNames(info))
	}
	if info.Inputs[k].Kind != core.KindTensor && info.Inputs[k].Kind != "" {
		return nil, fmt.Errorf("%s: input '%s' is a %s, not a tensor", key, name, info.Inputs[k].Type)
	}
	plan, err := image.NewPlan(image.Settings(decl), specs[k])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return &Image{Name: name, Index: k, Plan: plan}, nil
}

func inputNames(info core.ModelInfo) string {
	names := make([]string, len(info.Inputs))
	for i, in := range info.Inputs {
		names[i] = "'" + in.Name + "'"
	}
	return strings.Join(names, ", ")
}

func outputNames(info core.ModelInfo) string {
	names := make([]string, len(info.Outputs))
	for i, o := range info.Outputs {
		names[i] = "'" + o.Name + "'"
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TopK is how many classes a classify output answers per item (0 for
// ctc).
func (o *Output) TopK() int {
	if o.classify == nil {
		return 0
	}
	return o.classify.TopK
}
