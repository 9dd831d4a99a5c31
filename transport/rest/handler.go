// Package rest is svc's v1 JSON API, the one the specification describes:
// POST /predict, GET /health, /info and /metrics, with {"detail"} errors. It
// decodes requests, calls core and encodes the answers; it knows nothing of
// other protocols.
package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// The v1 paths.
const (
	PathPredict = "/predict"
	PathHealth  = "/health"
	PathInfo    = "/info"
	PathMetrics = "/metrics"
)

// BodyValidator checks a /predict body before it is decoded; its error text
// is the client-facing message of a 400. The OpenAPI validator is one.
type BodyValidator interface {
	// ValidateBody checks body against what the validator derived from
	// g, the generation of the model the request runs on.
	ValidateBody(ctx context.Context, g *core.Generation, body []byte) error
}

// Options configure a Handler.
type Options struct {
	Model    *core.Model
	Platform core.Platform
	// Validator is optional.
	Validator BodyValidator
	// Limits are the request limits: the body, its values (413 beyond
	// them), a string element (400), the X-Request-Timeout header's bound.
	Limits transport.Limits
	// Codec is what svc.yml declares for the model's inputs and outputs
	// (images in, meaning out); nil declares nothing.
	Codec *codec.Codec
	// Sequences keeps the state of sequences (nil: none; sequence.go).
	Sequences *seq.Store
	// Memory is the server-wide budget of request memory (nil: none).
	Memory *budget.Memory
	Logger *zap.Logger
}

// Handler serves the v1 endpoints.
type Handler struct {
	opts   Options
	life   *transport.Inferences
	health []byte
	log    *zap.Logger
}

// view is what the handler derives from a generation of the model, once.
type view struct {
	runner core.Runner
	info   []byte
	keys   [][]byte
	// media holds the image inputs and decoded outputs (nil: none);
	// specs are the runner's, with image inputs taking strings.
	media *codec.Set
	specs []tensor.Spec
	// json marks the outputs whose elements are JSON documents.
	json []bool
	// pictures is the input that takes encoded pictures as strings
	// (core.InputSpec.Pictures; -1: none).
	pictures int
}

// NewHandler returns the handler; the model may still be loading (Prepare
// is called once it has loaded).
func NewHandler(o Options) (*Handler, error) {
	if o.Model == nil {
		return nil, errors.New("rest: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.Limits = o.Limits.Resolved()
	h := &Handler{opts: o, log: o.Logger, life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}
	h.health = mustJSON(Health{Status: "healthy", Model: o.Model.Name()})
	return h, nil
}

// Prepare derives the /info and /metrics bodies and the output keys from
// a loaded generation of the model. It is a core.Preparer.
func (h *Handler) Prepare(r core.Runner) (any, error) {
	info := r.Info()
	media, err := h.opts.Codec.For(r)
	if err != nil {
		return nil, err
	}
	infoBody := NewMediaInfo(info, media)
	if h.opts.Sequences != nil {
		infoBody.Sequence = h.opts.Sequences.Describe(r)
	}
	v := &view{runner: r, info: mustJSON(infoBody), keys: outputKeys(info.Outputs), media: media, specs: mediaSpecs(r.Specs(), media), json: jsonOutputs(info.Outputs), pictures: picturesInput(info.Inputs)}
	return v, nil
}

// metricsBody is the /metrics JSON record of generation g, whose provider
// the runner does not know.
func (h *Handler) metricsBody(g *core.Generation) []byte {
	if p := g.Provider; p != nil {
		return mustJSON(NewMetrics(p.ORTName(), p.Platform(), p.Description(), h.opts.Platform))
	}
	return mustJSON(NewMetrics("", "", "", h.opts.Platform))
}

// Routes are the v1 endpoints this package owns, in the specification's
// order: all but GET /metrics, whose route transport/metrics owns (it
// serves MetricsJSON unless the client asks for the Prometheus format).
func (h *Handler) Routes() []transport.Route {
	return []transport.Route{
		{Methods: []string{http.MethodPost}, Path: PathPredict, Purpose: "Run inference", Order: 10, Handler: http.HandlerFunc(h.predict)},
		{Methods: []string{http.MethodGet}, Path: PathHealth, Purpose: "Health check", Order: 20, Handler: http.HandlerFunc(h.serveHealth)},
		{Methods: []string{http.MethodGet}, Path: PathInfo, Purpose: "Model information", Order: 30, Handler: http.HandlerFunc(h.serveInfo)},
	}
}

// MetricsJSON serves the spec's JSON metrics record (GET /metrics).
func (h *Handler) MetricsJSON() transport.MetricsJSON { return http.HandlerFunc(h.serveMetrics) }

// ServeHTTP serves the v1 routes alone, GET /metrics with its JSON record
// included (for tests and embedding).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	routes := append(h.Routes(), transport.Route{Methods: []string{http.MethodGet}, Path: PathMetrics, Handler: h.MetricsJSON()})
	transport.NewRouter(routes, WriteError).ServeHTTP(w, r)
}

// loaded returns the generation the request runs on, held until the
// caller releases it, and the handler's view of it; or it writes a 503
// while the model is not ready.
func (h *Handler) loaded(w http.ResponseWriter) (*view, *core.Generation, bool) {
	g, err := h.opts.Model.Acquire()
	if err != nil {
		h.writeErr(w, err)
		return nil, nil, false
	}
	v, ok := core.ViewOf[*view](g)
	if !ok {
		// Ready without Prepare: a wiring mistake.
		g.Release()
		WriteError(w, http.StatusServiceUnavailable, "Model is not ready")
		return nil, nil, false
	}
	return v, g, true
}

func (h *Handler) serveHealth(w http.ResponseWriter, _ *http.Request) { writeJSON(w, h.health) }

func (h *Handler) serveInfo(w http.ResponseWriter, _ *http.Request) {
	if v, g, ok := h.loaded(w); ok {
		defer g.Release()
		writeJSON(w, v.info)
	}
}

func (h *Handler) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	if _, g, ok := h.loaded(w); ok {
		defer g.Release()
		writeJSON(w, h.metricsBody(g))
	}
}

// predict serves POST /predict; the model counts it as an inference
// request from start to end, with its outcome (an inference failure if the
// handler panics: the request still ends).
func (h *Handler) predict(w http.ResponseWriter, r *http.Request) {
	q := h.life.Begin(r.Context())
	defer q.End()
	q.Outcome = h.servePredict(w, r, q)
}

func (h *Handler) servePredict(w http.ResponseWriter, r *http.Request, q *transport.Inference) core.Outcome {
	ct := r.Header.Get("Content-Type")
	kind, params := bodyKind(ct)
	if kind == bodyOther {
		WriteError(w, http.StatusUnsupportedMediaType, unsupportedType(ct, h.hasImages()))
		return core.OutcomeBadRequest
	}
	v, g, ok := h.loaded(w)
	if !ok {
		return core.OutcomeNotReady
	}
	// The generation's sessions stay open until the answer is written.
	defer g.Release()
	if kind != bodyJSON && len(v.media.Images()) == 0 && v.pictures < 0 {
		WriteError(w, http.StatusUnsupportedMediaType, unsupportedType(ct, false))
		return core.OutcomeBadRequest
	}
	raw, err := wantRaw(r)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeBadRequest
	}
	dec, drawType, err := decodingOf(r, v.media, raw)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeBadRequest
	}
	// The request's timeout counts from its arrival: reading and
	// decoding it count too. Its context carries the timeout, the
	// priority and the request's ticket of the memory budget to every
	// path below.
	timeout, priority, err := scheduling(r)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return core.OutcomeBadRequest
	}
	q.Schedule(timeout, priority)
	// A pipeline's per-request overrides (core.ParamsOf).
	q.Ctx = core.WithParams(q.Ctx, queryParams(r))
	// Set.Tensors records in dec where the pictures went.
	q.Ctx = codec.WithDecoding(q.Ctx, dec)
	ctx := q.Ctx
	began := core.TraceStart(ctx)
	body, err := q.ReadBody(w, r)
	// The answer is written over the body; the buffer goes back once it
	// is sent.
	defer transport.PutBody(body)
	if err != nil {
		status, msg := transport.BodyError(err, h.opts.Limits.MaxBodyBytes)
		transport.SetRetryAfter(w.Header(), err)
		WriteError(w, status, msg)
		return decodeOutcome(err)
	}
	if st, isStep, err := sequenceHeaders(r); err != nil || isStep {
		if err != nil {
			h.writeErr(w, err)
			return core.OutcomeBadRequest
		}
		return h.serveStep(ctx, w, v, st, body)
	}
	inputs, texts, err := h.decodeBody(q, kind, params, v, g, body, raw)
	if err != nil {
		h.writeErr(w, err)
		return decodeOutcome(err)
	}
	if err := checkPictures(v, dec, drawType, inputs); err != nil {
		tensor.RecycleAll(inputs)
		h.writeErr(w, err)
		return core.OutcomeBadRequest
	}
	core.TraceStep(ctx, core.StepDecode, began, 0)
	if texts != nil && texts.in != nil {
		return h.serveTexts(w, q, v, texts.in, body)
	}
	cache := core.CacheControl{Bypass: transport.NoCache(r.Header.Values("Cache-Control"))}
	res, err := v.runner.Predict(core.WithCacheControl(ctx, &cache), inputs)
	// The run is over and no output shares the inputs' storage: it goes
	// back to the tensor pools before the answer is encoded, so a request
	// holds its input or its answer, never both.
	tensor.RecycleAll(inputs)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeOf(err)
	}
	transport.SetCacheHeader(w.Header(), cache.Status)
	// The answer is written before the outputs go back to the pools.
	defer res.Release()
	defer core.TraceStep(ctx, core.StepEncode, core.TraceStart(ctx), 0)
	if drawType != "" {
		return h.writeDrawing(ctx, w, dec, res, drawType)
	}
	return h.writeOutputs(w, v, res, body, texts, dec, raw)
}

// checkPictures refuses, before the run, what a request's pictures may
// not ask: pictures its runner decodes (a pipeline's) past
// limits.max_images, as an image input's are, and a drawing (drawType)
// of other than one picture.
func checkPictures(v *view, dec *codec.Decoding, drawType string, inputs []*tensor.Tensor) error {
	if v.pictures >= 0 && inputs[v.pictures] != nil {
		strs, _ := inputs[v.pictures].Data.([]string)
		if err := v.media.CountPictures(v.specs[v.pictures].Name, len(strs)); err != nil {
			return err
		}
		if drawType != "" {
			// The drawing is of the one sent.
			dec.SentPictures(strs)
		}
	}
	if drawType != "" {
		return dec.CheckDraw()
	}
	return nil
}

// writeOutputs answers res as JSON, written over body: a text model's
// decoded answer, or the outputs keyed by name (decoded with dec unless
// raw).
func (h *Handler) writeOutputs(w http.ResponseWriter, v *view, res core.Result, body []byte, texts *textReq, dec *codec.Decoding, raw bool) core.Outcome {
	var out []byte
	var err error
	if texts != nil && !raw {
		out, err = v.media.Text().AppendJSON(body[:0], res, texts.batch)
	} else {
		out, err = appendOutputs(body[:0], v.keys, res, v.media, dec, raw, v.json)
	}
	if err != nil {
		h.log.Error("encode outputs", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
		WriteError(w, http.StatusInternalServerError, "Inference failed: "+err.Error())
		return core.OutcomeInference
	}
	writeJSON(w, out)
	return core.OutcomeSuccess
}

// decodeBody makes the model's inputs of a body of kind (params: its
// Content-Type's), read already reserved of the memory budget, and
// reserves what its run's outputs will hold; a text body returns its
// batch too.
func (h *Handler) decodeBody(q *transport.Inference, kind int, params map[string]string, v *view, g *core.Generation, body []byte, raw bool) ([]*tensor.Tensor, *textReq, error) {
	var inputs []*tensor.Tensor
	var texts *textReq
	var err error
	ctx := q.Ctx
	switch kind {
	case bodyJSON:
		inputs, texts, err = h.jsonInputs(q, v, g, transport.TrimBOM(body), raw)
		if texts != nil && texts.in != nil {
			// Its runs reserve their own memory, batch by batch.
			return nil, texts, err
		}
	case bodyMultipart:
		if err = q.ReserveBody(int64(len(body)), 0); err == nil {
			if v.pictures >= 0 {
				inputs, err = pictureStrings(body, params["boundary"], v)
				break
			}
			inputs, err = multipartBody(ctx, body, params["boundary"], v.runner.Specs(), v.media, h.opts.Limits.MaxStringBytes)
		}
	default:
		if err = q.ReserveBody(int64(len(body)), 0); err == nil {
			if v.pictures >= 0 {
				inputs = stringInput(v, []string{string(body)})
				break
			}
			inputs, err = pictureBody(ctx, body, v.runner.Specs(), v.media)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := budget.ReserveRun(ctx, v.runner.Info(), inputs); err != nil {
		tensor.RecycleAll(inputs)
		return nil, nil, err
	}
	return inputs, texts, nil
}

// hasImages reports whether the loaded model has image inputs.
func (h *Handler) hasImages() bool {
	v, ok := core.ViewOf[*view](h.opts.Model.Current())
	return ok && len(v.media.Images()) > 0
}

// jsonInputs decodes a JSON body: counted, validated, then decoded into
// the model's inputs, image inputs from the pictures their strings carry,
// id inputs from the texts of a text body (its batch returned).
func (h *Handler) jsonInputs(q *transport.Inference, v *view, g *core.Generation, body []byte, raw bool) ([]*tensor.Tensor, *textReq, error) {
	ctx := q.Ctx
	// One pass over the body before it is decoded: its values, and each
	// input's values, strings and kind.
	sc := tensorjson.ScanObject(body)
	if input, over := sc.Over(body, h.opts.Limits.MaxElements); over {
		return nil, nil, &tooLarge{fmt.Sprintf("Too many elements: input '%s' takes the request past the limit of %d values", transport.Quote(input), h.opts.Limits.MaxElements)}
	}
	values := min(sc.Commas+1, h.opts.Limits.MaxElements)
	if err := q.ReserveBody(int64(len(body)), values); err != nil {
		return nil, nil, err
	}
	x := v.media.Text()
	isText, err := textBody(&sc, body, x)
	if err != nil {
		return nil, nil, err
	}
	if err := countStrings(&sc, v.media, isText); err != nil {
		return nil, nil, err
	}
	if h.opts.Validator != nil {
		if err := h.opts.Validator.ValidateBody(ctx, g, body); err != nil {
			return nil, nil, &tensorjson.Error{Message: err.Error()}
		}
	}
	if isText {
		in, err := textInputs(body, x, h.opts.Limits.MaxStringBytes, values)
		if err != nil {
			return nil, nil, err
		}
		if !raw {
			return nil, &textReq{in: in}, nil
		}
		b, err := x.Encode(ctx, in.Texts, in.Pairs, in.Single)
		if err != nil {
			return nil, nil, err
		}
		return b.Inputs, &textReq{batch: b}, nil
	}
	inputs, err := h.decodeInputs(ctx, v, body, values, &sc)
	if err == nil {
		inputs, err = checkIDs(x, inputs)
	}
	return inputs, nil, err
}

// decodeInputs decodes a JSON body of the model's inputs, of at most
// values values, scanned as sc.
func (h *Handler) decodeInputs(ctx context.Context, v *view, body []byte, values int64, sc *tensorjson.Scan) ([]*tensor.Tensor, error) {
	// The commas bound the values, but a body may hide commas in strings:
	// past MaxElements values it was refused above, so no tensor is larger.
	images := len(v.media.Images()) > 0 || v.pictures >= 0
	maxString := h.opts.Limits.MaxStringBytes
	if images {
		// A picture is one long string, whether the codec decodes it or
		// the runner (a pipeline); the other inputs' strings are checked
		// once decoded.
		maxString = 0
	}
	inputs, err := decodeRequest(body, v.specs, maxString, values, sc)
	if err != nil || !images {
		return inputs, err
	}
	if err := imageInputs(ctx, inputs, v.specs, v.media, h.opts.Limits.MaxStringBytes); err != nil {
		tensor.RecycleAll(inputs)
		return nil, err
	}
	return inputs, nil
}

// decodeOutcome is the outcome of a request that failed before its run:
// refused (the client's doing, whatever the error), unless the server was
// busy, or the request ended or timed out first.
func decodeOutcome(err error) core.Outcome {
	if o := core.OutcomeOf(err); o != core.OutcomeInference {
		return o
	}
	return core.OutcomeBadRequest
}

// tooLarge is a body with more values than the limit (a 413).
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }

// writeErr answers with the status and detail for err, logging the
// unexpected ones.
func (h *Handler) writeErr(w http.ResponseWriter, err error) {
	var big *tooLarge
	if errors.As(err, &big) {
		WriteError(w, http.StatusRequestEntityTooLarge, big.msg)
		return
	}
	status, detail, known := transport.ErrorStatus(err)
	if !known {
		h.log.Error("predict", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
	}
	transport.SetRetryAfter(w.Header(), err)
	WriteError(w, status, detail)
}

// writeJSON writes a 200 with a pre-encoded JSON body.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
