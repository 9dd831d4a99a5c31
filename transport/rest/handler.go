// Package rest is svc's v1 JSON API, the one the specification describes:
// POST /predict, GET /health, /info and /metrics, with {"detail"} errors. It
// decodes requests, calls core and encodes the answers; it knows nothing of
// other protocols.
package rest

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
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
	ValidateBody(ctx context.Context, body []byte) error
}

// Options configure a Handler.
type Options struct {
	Model    *core.Model
	Platform core.Platform
	// Validator is optional.
	Validator    BodyValidator
	MaxBodyBytes int64
	// MaxElements caps the values in one /predict body (413 beyond it);
	// 0 means MaxBodyBytes/4.
	MaxElements int64
	// MaxStringBytes caps one string element (400 beyond it); 0 = none.
	MaxStringBytes int
	Logger         *zap.Logger
}

// Handler serves the v1 endpoints.
type Handler struct {
	opts   Options
	health []byte
	view   atomic.Pointer[view]
	log    *zap.Logger
}

// view is what the handler derives from the loaded model, once.
type view struct {
	runner  core.Runner
	info    []byte
	metrics []byte
	keys    [][]byte
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
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	if o.MaxElements <= 0 {
		o.MaxElements = max(o.MaxBodyBytes/4, 1)
	}
	h := &Handler{opts: o, log: o.Logger}
	h.health = mustJSON(Health{Status: "healthy", Model: o.Model.Name()})
	return h, nil
}

// Prepare derives the /info and /metrics bodies and the output keys from
// the loaded model. It is a core.Preparer.
func (h *Handler) Prepare(r core.Runner) error {
	info := r.Info()
	v := &view{runner: r, info: mustJSON(NewInfo(info)), keys: outputKeys(info.Outputs)}
	if p := h.opts.Model.Provider(); p != nil {
		v.metrics = mustJSON(NewMetrics(p.ORTName(), p.Platform(), p.Description(), h.opts.Platform))
	} else {
		v.metrics = mustJSON(NewMetrics("", "", "", h.opts.Platform))
	}
	h.view.Store(v)
	return nil
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

// loaded returns the view, or writes a 503 while the model is not ready.
func (h *Handler) loaded(w http.ResponseWriter) (*view, bool) {
	if _, err := h.opts.Model.Runner(); err != nil {
		h.writeErr(w, err)
		return nil, false
	}
	v := h.view.Load()
	if v == nil {
		// Ready without Prepare: a wiring mistake.
		WriteError(w, http.StatusServiceUnavailable, "Model is not ready")
		return nil, false
	}
	return v, true
}

func (h *Handler) serveHealth(w http.ResponseWriter, _ *http.Request) { writeJSON(w, h.health) }

func (h *Handler) serveInfo(w http.ResponseWriter, _ *http.Request) {
	if v, ok := h.loaded(w); ok {
		writeJSON(w, v.info)
	}
}

func (h *Handler) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	if v, ok := h.loaded(w); ok {
		writeJSON(w, v.metrics)
	}
}

// isJSON accepts application/json and application/*+json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// predict serves POST /predict; the model counts it as an inference
// request from start to end, with its outcome (an inference failure if the
// handler panics: the request still ends).
func (h *Handler) predict(w http.ResponseWriter, r *http.Request) {
	start := h.opts.Model.BeginRequest()
	outcome := core.OutcomeInference
	defer func() { h.opts.Model.EndRequest(start, outcome) }()
	outcome = h.servePredict(w, r)
}

func (h *Handler) servePredict(w http.ResponseWriter, r *http.Request) core.Outcome {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		if ct == "" {
			WriteError(w, http.StatusUnsupportedMediaType, "Missing Content-Type: send the body as application/json")
		} else {
			WriteError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Unsupported Content-Type '%s': send the body as application/json", truncate(ct, 100)))
		}
		return core.OutcomeBadRequest
	}
	v, ok := h.loaded(w)
	if !ok {
		return core.OutcomeNotReady
	}
	body, err := transport.ReadBody(r, h.opts.MaxBodyBytes)
	// The answer is written over the body; the buffer goes back once it
	// is sent.
	defer transport.PutBody(body)
	if err != nil {
		status, msg := transport.BodyError(err, h.opts.MaxBodyBytes)
		WriteError(w, status, msg)
		return core.OutcomeBadRequest
	}
	body = transport.TrimBOM(body)
	// The body is in: lift the server's read timeout, which would
	// otherwise cancel the request's context during a long inference.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	commas, input, over := tensorjson.CountValues(body, h.opts.MaxElements)
	if over {
		WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Too many elements: input '%s' takes the request past the limit of %d values", transport.Quote(input), h.opts.MaxElements))
		return core.OutcomeBadRequest
	}
	if h.opts.Validator != nil {
		if err := h.opts.Validator.ValidateBody(r.Context(), body); err != nil {
			WriteError(w, http.StatusBadRequest, err.Error())
			return core.OutcomeBadRequest
		}
	}
	// The commas bound the values, but a body may hide commas in strings:
	// past MaxElements values it was refused above, so no tensor is larger.
	inputs, err := decodeRequest(body, v.runner.Specs(), h.opts.MaxStringBytes, min(commas+1, h.opts.MaxElements))
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeBadRequest
	}
	res, err := v.runner.Predict(r.Context(), inputs)
	// The run is over and no output shares the inputs' storage: it goes
	// back to the tensor pools before the answer is encoded, so a request
	// holds its input or its answer, never both.
	tensor.RecycleAll(inputs)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeOf(err)
	}
	// The answer is written before the outputs go back to the pools.
	defer res.Release()
	out, err := appendResult(body[:0], v.keys, res)
	if err != nil {
		h.log.Error("encode outputs", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
		WriteError(w, http.StatusInternalServerError, "Inference failed: "+err.Error())
		return core.OutcomeInference
	}
	writeJSON(w, out)
	return core.OutcomeSuccess
}

// writeErr answers with the status and detail for err, logging the
// unexpected ones.
func (h *Handler) writeErr(w http.ResponseWriter, err error) {
	status, detail, known := transport.ErrorStatus(err)
	if !known {
		h.log.Error("predict", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
	}
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
