package oip

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// Platform is the model metadata's platform.
const Platform = "onnx_onnxv1"

// ServerName is the server metadata's name.
const ServerName = "svc"

// View is what the protocol derives from the loaded model, once, for every
// codec: the inputs and outputs as the protocol sees them, the lists its
// messages name, and the model metadata.
type View struct {
	runner core.Runner
	// media holds the image inputs and decoded outputs (nil: none).
	media   *codec.Set
	version string
	specs   []tensor.Spec
	outputs []outputInfo
	// tensors is every tensor output, in the model's order: what a
	// response carries when its request names no outputs.
	tensors []RequestedOutput
	// answered is tensors without the outputs a decoded output reads (a
	// segment output's prototype masks): what a response carries unless
	// the request asks raw.
	answered   []RequestedOutput
	inputList  string
	outputList string
	// metadata lists the tensor inputs and outputs.
	metaInputs, metaOutputs []TensorMetadata
	// text is the text inputs and the embedding output (nil: none).
	text *textView
	// seqs keeps the state of sequences (nil: none; sequence.go).
	seqs *seq.Store
}

// outputInfo is one model output as the protocol sees it.
type outputInfo struct {
	name string
	// dtype is what the response carries (BYTES for a decoded output),
	// modelType what the model gives.
	dtype, modelType tensor.DType
	isTensor         bool
	kind             core.ValueKind
	// decoded is the output's meaning, nil for a plain tensor.
	decoded *codec.Output
}

// NewView derives the protocol's view of the model that r runs, with the
// image inputs and decoded outputs of media (nil: none): an image input
// takes BYTES of shape [N], encoded pictures; a decoded output answers
// BYTES, [N, k] "score:index:label" strings for classify and [N] texts
// for ctc, unless the request asks for the raw tensors.
func NewView(r core.Runner, media *codec.Set) *View {
	info := r.Info()
	v := &View{runner: r, media: media, version: info.Version, specs: append([]tensor.Spec(nil), r.Specs()...), metaInputs: []TensorMetadata{}, metaOutputs: []TensorMetadata{}}
	for _, im := range media.Images() {
		v.specs[im.Index] = tensor.Spec{Name: im.Name, DType: tensor.String, Shape: []int64{-1}, Required: v.specs[im.Index].Required}
	}
	if x := media.Text(); x != nil {
		v.addText(x, len(info.Outputs))
	}
	names := make([]string, 0, max(len(v.specs), len(info.Outputs)))
	for _, s := range v.specs {
		names = append(names, s.Name)
		if s.DType.Valid() {
			v.metaInputs = append(v.metaInputs, TensorMetadata{Name: s.Name, Datatype: Datatype(s.DType), Shape: metadataShape(s.Shape)})
		}
	}
	v.inputList = listOrNone(names)
	names = names[:0]
	for i, o := range info.Outputs {
		names = append(names, o.Name)
		dt, ok := tensor.ParseDType(o.Type)
		oi := outputInfo{name: o.Name, dtype: dt, modelType: dt, kind: o.Kind, isTensor: ok && (o.Kind == core.KindTensor || o.Kind == "")}
		shape := metadataShape(o.Shape)
		if d := media.OutputAt(i); d != nil {
			oi.dtype, oi.decoded, shape = tensor.String, d, decodedShape(d, o.Shape)
		}
		v.outputs = append(v.outputs, oi)
		if oi.isTensor {
			v.tensors = append(v.tensors, RequestedOutput{Index: i})
			if !media.Consumed(i) {
				v.answered = append(v.answered, RequestedOutput{Index: i})
			}
			v.metaOutputs = append(v.metaOutputs, TensorMetadata{Name: o.Name, Datatype: Datatype(oi.dtype), Shape: shape})
		}
	}
	if v.text != nil {
		v.addAnswer()
		names = append(names, v.text.x.Answer())
	}
	v.outputList = listOrNone(names)
	return v
}

// Version is the model's version.
func (v *View) Version() string { return v.version }

// Spec is the model's input k.
func (v *View) Spec(k int) *tensor.Spec { return &v.specs[k] }

// OutputName is the name of the model's output i.
func (v *View) OutputName(i int) string { return v.outputs[i].name }

// OutputDatatype is the element type of the model's output i in the
// response to req: as the metadata says, or the model's own for a decoded
// output that req asks raw.
func (v *View) OutputDatatype(i int, req *Request) tensor.DType {
	if req.raw {
		return v.outputs[i].modelType
	}
	return v.outputs[i].dtype
}

// StringLimit is the longest BYTES element input k takes, given limit:
// none for an image input or a pipeline's pictures, whose elements are
// pictures (the body limit bounds them).
func (v *View) StringLimit(k, limit int) int {
	if v.media.ImageAt(k) != nil || k == v.media.PicturesInput() {
		return 0
	}
	return limit
}

// HasImages reports whether the model has image inputs.
func (v *View) HasImages() bool { return len(v.media.Images()) > 0 }

// TakesPictures reports whether the model has image inputs, or an input
// of pictures its runner decodes itself (a pipeline's): inputs whose
// BYTES elements are as long as pictures.
func (v *View) TakesPictures() bool { return v.HasImages() || v.media.PicturesInput() >= 0 }

// decodedShape is a decoded output's shape in the metadata: [-1, k] for
// classify, [-1] for the others (a text, a JSON list of detections).
func decodedShape(d *codec.Output, shape []int64) []int64 {
	return d.Shape()
}

// Metadata is the model metadata, the model being served as name: its
// tensor inputs and outputs (the others are left out, since the protocol
// carries tensors only). It shares its lists with v: read them only.
func (v *View) Metadata(name string) ModelMetadata {
	return ModelMetadata{Name: name, Versions: []string{v.version}, Platform: Platform, Inputs: v.metaInputs, Outputs: v.metaOutputs}
}

// Run runs the request's inputs through the model, within the request's
// lifecycle q (transport.Inferences): at the request's priority and
// within its timeout, counted from its arrival. The inputs go back to the
// tensor pools as soon as the run is over (no output shares their
// storage), before the answer is encoded.
func (v *View) Run(q *transport.Inference, req *Request, maxString int) (core.Result, error) {
	q.Schedule(req.timeout, req.priority)
	// Set.Tensors records in the request's decoding where the pictures
	// went.
	q.Ctx = codec.WithDecoding(q.Ctx, req.decoding)
	q.Ctx = core.WithParams(q.Ctx, req.params)
	ctx := q.Ctx
	if err := v.texts(ctx, req); err != nil {
		tensor.RecycleAll(req.inputs)
		return nil, err
	}
	if err := v.pictures(ctx, req, maxString); err != nil {
		tensor.RecycleAll(req.inputs)
		return nil, err
	}
	core.TraceStep(ctx, core.StepDecode, req.began, 0)
	if req.answers != nil {
		// Its texts ran already, in batches: the answer is all it asks.
		return core.NewResult(make([]*tensor.Tensor, len(v.outputs)-1)), nil
	}
	if req.seq.set {
		return v.step(ctx, req)
	}
	if err := budget.ReserveRun(ctx, v.runner.Info(), req.inputs); err != nil {
		tensor.RecycleAll(req.inputs)
		return nil, err
	}
	res, err := v.runner.Predict(core.WithCacheControl(ctx, &req.cache), req.inputs)
	tensor.RecycleAll(req.inputs)
	return res, err
}

// CheckResult checks that a run gave a value for each of the model's
// outputs.
func (v *View) CheckResult(res core.Result) error {
	n := len(v.outputs)
	if v.text != nil {
		n--
	}
	if res.Len() != n {
		return fmt.Errorf("the run gave %d outputs, the model has %d", res.Len(), n)
	}
	return nil
}

// OutputTensor is the model's output i in res, which must be a tensor:
// decoded into BYTES when the output has a meaning, unless req asks raw.
func (v *View) OutputTensor(res core.Result, i int, req *Request) (*tensor.Tensor, error) {
	if v.text != nil && i == v.text.answerAt {
		return v.answer(res, req)
	}
	val, err := res.Value(i)
	if err != nil {
		return nil, fmt.Errorf("output '%s': %w", v.outputs[i].name, err)
	}
	if val.Kind != core.KindTensor || val.Tensor == nil {
		return nil, fmt.Errorf("output '%s' is a %s, not a tensor", v.outputs[i].name, val.Kind)
	}
	d := v.outputs[i].decoded
	if d == nil || req.raw {
		return val.Tensor, nil
	}
	strs, shape, err := req.decoding.Strings(d, res)
	if err != nil {
		return nil, err
	}
	return &tensor.Tensor{DType: tensor.String, Shape: shape, Data: strs}, nil
}

// pictures replaces each image input's BYTES with the input's tensor made
// from the pictures they hold, and checks the other inputs' BYTES
// elements against maxString (the decoders let every element through
// when the model has image inputs).
func (v *View) pictures(ctx context.Context, req *Request, maxString int) error {
	if !v.TakesPictures() {
		return nil
	}
	var ps []codec.Pictures
	for k, t := range req.inputs {
		if t == nil {
			continue
		}
		if k == v.media.PicturesInput() {
			// Its runner decodes them (a pipeline): counted as an image
			// input's pictures.
			if err := v.media.CountPictures(v.specs[k].Name, t.Len()); err != nil {
				return err
			}
			continue
		}
		strs, _ := t.Data.([]string)
		im := v.media.ImageAt(k)
		if im == nil {
			for i, s := range strs {
				if maxString > 0 && len(s) > maxString {
					return invalid("Input '%s': BYTES element %d is %d bytes long, over the limit of %d", v.specs[k].Name, i, len(s), maxString)
				}
			}
			continue
		}
		pics := make([][]byte, len(strs))
		for i, s := range strs {
			pics[i] = codec.PictureBytes([]byte(s))
		}
		ps = append(ps, codec.Pictures{Input: im, Data: pics})
	}
	if len(ps) == 0 {
		return nil
	}
	ts, err := v.media.Tensors(ctx, ps)
	if err != nil {
		var ie *core.InputError
		if errors.As(err, &ie) {
			return invalid("%s", ie.Message)
		}
		return err
	}
	for i, p := range ps {
		req.inputs[p.Input.Index].Recycle()
		req.inputs[p.Input.Index] = ts[i]
	}
	return nil
}

func (v *View) inputIndex(name string) int {
	for i := range v.specs {
		if v.specs[i].Name == name {
			return i
		}
	}
	return -1
}

func (v *View) outputIndex(name string) int {
	for i := range v.outputs {
		if v.outputs[i].name == name {
			return i
		}
	}
	return -1
}

// metadataShape is a shape for the metadata: -1 for dynamic dimensions; an
// input of unknown rank is [-1].
func metadataShape(s []int64) []int64 {
	if s == nil {
		return []int64{-1}
	}
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = max(d, -1)
	}
	return out
}

// listOrNone lists names for messages: 'a', 'b'; "none" when empty.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "'" + strings.Join(names, "', '") + "'"
}

// RunSample runs body, an inference request as a client POSTs it to
// /v2/models/NAME/infer (JSON), on r with the media settings of the model,
// and drops the answer: the warm-up inference from a sample.
func RunSample(ctx context.Context, r core.Runner, media *codec.Set, body []byte) error {
	v := &restView{View: NewView(r, media)}
	req, err := parseRequest(body, nil, false, v)
	if err != nil {
		return err
	}
	q := (&transport.Inferences{}).Step(ctx)
	defer q.End()
	res, err := v.Run(q, &req.Request, 0)
	if err != nil {
		return err
	}
	defer res.Release()
	return v.CheckResult(res)
}
