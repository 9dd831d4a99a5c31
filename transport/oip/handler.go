package oip

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// HeaderInferenceHeaderLength is the binary data extension's header: the
// length of the JSON part of a body that binary tensors follow.
const HeaderInferenceHeaderLength = "Inference-Header-Content-Length"

// The names of the protocol's extensions that svc serves.
const (
	ExtensionBinaryTensorData = "binary_tensor_data"
	ExtensionSequence         = "sequence"
	ExtensionModelRepository  = "model_repository"
)

// Extensions are the protocol extensions the REST server metadata lists:
// binary tensors, sequences (their parameters) and the model repository.
var Extensions = []string{ExtensionBinaryTensorData, ExtensionSequence, ExtensionModelRepository}

// ServerVersion is the svc version the server metadata reports.
type ServerVersion string

// Options configure a Handler.
type Options struct {
	Model   *core.Model
	Version string
	// Limits are the request limits: the body, the values of its JSON
	// part, a string element, the timeout parameter's bound.
	Limits transport.Limits
	// Codec is what svc.yml declares for the model's inputs and outputs;
	// nil declares nothing.
	Codec *codec.Codec
	// Sequences keeps the state of sequences (nil: none).
	Sequences *seq.Store
	// Memory is the server-wide budget of request memory (nil: none).
	Memory *budget.Memory
	Logger *zap.Logger
}

// Handler serves the v2 endpoints.
type Handler struct {
	opts     Options
	life     *transport.Inferences
	server   []byte
	log      *zap.Logger
	nameJSON []byte
}

// restView is the protocol's view of the loaded model with what the REST
// answers take from it, encoded once.
type restView struct {
	*View
	// keys[i] opens output i in a response: {"name":"...","datatype":"
	keys        [][]byte
	metadata    []byte
	ready       []byte
	responseTop []byte // {"model_name":...,"model_version":...,
	maxString   int    // longest string element accepted (0 = any)
}

// NewHandler returns the handler; the model may still be loading (Prepare
// is called once it has loaded).
func NewHandler(o Options) (*Handler, error) {
	if o.Model == nil {
		return nil, errors.New("oip: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.Limits = o.Limits.Resolved()
	if o.Version == "" {
		o.Version = "unknown"
	}
	h := &Handler{opts: o, log: o.Logger, life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}
	h.server = mustJSON(ServerMetadata{Name: ServerName, Version: o.Version, Extensions: Extensions})
	h.nameJSON = jsonString(nil, o.Model.Name())
	return h, nil
}

// Prepare derives the model metadata and the output descriptions from a
// loaded generation of the model. It is a core.Preparer.
func (h *Handler) Prepare(r core.Runner) (any, error) {
	name := h.opts.Model.Name()
	media, err := h.opts.Codec.For(r)
	if err != nil {
		return nil, err
	}
	v := &restView{View: NewView(r, media), maxString: h.opts.Limits.MaxStringBytes}
	v.SetSequences(h.opts.Sequences)
	if v.TakesPictures() {
		// Pictures are long BYTES elements: the other inputs' are checked
		// once decoded (View.Run).
		v.maxString = 0
	}
	for i := range v.outputs {
		v.keys = append(v.keys, append(jsonString([]byte(`{"name":`), v.OutputName(i)), `,"datatype":"`...))
	}
	v.metadata = mustJSON(v.Metadata(name))
	v.ready = mustJSON(ModelReady{Name: name, Ready: true})
	top := append([]byte(`{"model_name":`), h.nameJSON...)
	top = append(top, `,"model_version":`...)
	v.responseTop = append(jsonString(top, v.Version()), ',')
	return v, nil
}

// The v2 paths (gorilla/mux templates).
const (
	PathServer         = "/v2"
	PathLive           = "/v2/health/live"
	PathReady          = "/v2/health/ready"
	PathModel          = "/v2/models/{name}"
	PathModelVersion   = "/v2/models/{name}/versions/{version}"
	PathModelReady     = "/v2/models/{name}/ready"
	PathModelVerReady  = "/v2/models/{name}/versions/{version}/ready"
	PathInfer          = "/v2/models/{name}/infer"
	PathInferVersion   = "/v2/models/{name}/versions/{version}/infer"
	orderFirst         = 100
	purposeInfer       = "Run inference (Open Inference Protocol v2)"
	purposeModelMeta   = "Model metadata (v2)"
	purposeModelReady  = "Model readiness (v2)"
	purposeServerReady = "Server readiness (v2)"
	purposeServerLive  = "Server liveness (v2)"
	purposeServerMeta  = "Server metadata (v2)"
)

var plainName = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// Routes are the v2 endpoints. The banner lists them with the model's
// name in the path when it needs no escaping.
func (h *Handler) Routes() []transport.Route {
	get := []string{http.MethodGet}
	post := []string{http.MethodPost}
	meta := http.HandlerFunc(h.serveModel)
	ready := http.HandlerFunc(h.serveModelReady)
	infer := http.HandlerFunc(h.infer)
	routes := []transport.Route{
		{Methods: get, Path: PathServer, Purpose: purposeServerMeta, Order: orderFirst + 5, Handler: http.HandlerFunc(h.serveServer)},
		{Methods: get, Path: PathLive, Purpose: purposeServerLive, Order: orderFirst + 4, Handler: http.HandlerFunc(h.serveLive)},
		{Methods: get, Path: PathReady, Purpose: purposeServerReady, Order: orderFirst + 3, Handler: http.HandlerFunc(h.serveReady)},
		{Methods: get, Path: PathModelVersion, Handler: meta},
		{Methods: get, Path: PathModelVerReady, Handler: ready},
		{Methods: post, Path: PathInferVersion, Handler: infer},
	}
	templated := []transport.Route{
		{Methods: post, Path: PathInfer, Purpose: purposeInfer, Order: orderFirst, Handler: infer},
		{Methods: get, Path: PathModel, Purpose: purposeModelMeta, Order: orderFirst + 1, Handler: meta},
		{Methods: get, Path: PathModelReady, Purpose: purposeModelReady, Order: orderFirst + 2, Handler: ready},
	}
	if name := h.opts.Model.Name(); plainName.MatchString(name) {
		for _, r := range templated {
			named := r
			named.Path = strings.Replace(r.Path, "{name}", name, 1)
			routes = append(routes, named)
			r.Purpose = ""
			routes = append(routes, r)
		}
	} else {
		routes = append(routes, templated...)
	}
	// The router's 404 and 405 under /v2 answer in this protocol's form.
	for i := range routes {
		routes[i].Errors = WriteError
	}
	return routes
}

// ServeHTTP serves the v2 routes alone (for tests and embedding).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	transport.NewRouter(h.Routes(), WriteError).ServeHTTP(w, r)
}

func (h *Handler) serveServer(w http.ResponseWriter, _ *http.Request) { writeJSON(w, h.server) }

func (h *Handler) serveLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, []byte(`{"live":true}`))
}

func (h *Handler) serveReady(w http.ResponseWriter, _ *http.Request) {
	if err := h.notReady(); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, []byte(`{"ready":true}`))
}

// notReady says why the model should get no traffic, or nil when it is
// ready.
func (h *Handler) notReady() error {
	m := h.opts.Model
	switch s := m.State(); s {
	case core.StateReady:
		if _, ok := core.ViewOf[*restView](m.Current()); !ok {
			return notReadyYet()
		}
		return nil
	case core.StateDraining:
		return Errorf(KindUnavailable, "Model '%s' is draining: the server is shutting down", m.Name())
	default:
		return &core.NotReadyError{Model: m.Name(), State: s}
	}
}

// notReadyYet refuses a request for a model that is loaded but not yet
// prepared for the protocol.
func notReadyYet() error { return Errorf(KindUnavailable, "Model is not ready") }

// model checks the path's model name and version and returns the view of
// the generation the request runs on, held until the caller releases it,
// or an error: 404 for another name or version, 503 while the model cannot
// serve.
func (h *Handler) model(r *http.Request) (*restView, *core.Generation, error) {
	vars := mux.Vars(r)
	name := vars["name"]
	if name == "" {
		// A route with the name in its path.
		name = h.opts.Model.Name()
	}
	if name != h.opts.Model.Name() {
		return nil, nil, UnknownModel(name, h.opts.Model.Name())
	}
	g, err := h.opts.Model.Acquire()
	if err != nil {
		return nil, nil, err
	}
	v, ok := core.ViewOf[*restView](g)
	if !ok {
		g.Release()
		return nil, nil, notReadyYet()
	}
	if ver, ok := vars["version"]; ok && ver != v.Version() {
		g.Release()
		return nil, nil, UnknownVersion(ver, h.opts.Model.Name(), v.Version())
	}
	return v, g, nil
}

func (h *Handler) serveModel(w http.ResponseWriter, r *http.Request) {
	v, g, err := h.model(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer g.Release()
	writeJSON(w, v.metadata)
}

func (h *Handler) serveModelReady(w http.ResponseWriter, r *http.Request) {
	v, g, err := h.model(r)
	if err == nil {
		defer g.Release()
		err = h.notReady()
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, v.ready)
}

// acceptedContentType reports whether an inference body may be of type ct:
// JSON, octet-stream (binary tensors), or none given.
func acceptedContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "application/octet-stream" ||
		(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func (h *Handler) infer(w http.ResponseWriter, r *http.Request) {
	q := h.life.Begin(r.Context())
	defer q.End()
	err := h.serveInfer(w, r, q)
	if err != nil {
		transport.SetRetryAfter(w.Header(), err)
		h.fail(w, err)
	}
	q.Outcome = outcomeOf(err)
}

// serveInfer serves one inference, within its lifecycle q; an error is
// answered by the caller.
func (h *Handler) serveInfer(w http.ResponseWriter, r *http.Request, q *transport.Inference) error {
	if ct := r.Header.Get("Content-Type"); !acceptedContentType(ct) {
		return &httpError{status: http.StatusUnsupportedMediaType, message: fmt.Sprintf(
			"Unsupported Content-Type '%s': send application/json, or application/octet-stream with the %s header", transport.Quote(ct), HeaderInferenceHeaderLength)}
	}
	v, g, err := h.model(r)
	if err != nil {
		return err
	}
	// The generation's sessions stay open until the answer is written.
	defer g.Release()
	body, err := q.ReadBody(w, r)
	// The answer is written over the body; the buffer goes back once it
	// is sent.
	defer transport.PutBody(body)
	if err != nil {
		status, msg := transport.BodyError(err, h.opts.Limits.MaxBodyBytes)
		return &httpError{status: status, message: msg, cause: err}
	}
	header, bin, binaryMode := body, []byte(nil), false
	if hl, ok := r.Header[HeaderInferenceHeaderLength]; ok {
		n, perr := strconv.ParseInt(strings.TrimSpace(hl[0]), 10, 64)
		if perr != nil || n < 0 {
			return invalid("Invalid %s '%s': expected a non-negative integer", HeaderInferenceHeaderLength, transport.Quote(hl[0]))
		}
		if n > int64(len(body)) {
			return invalid("%s is %d, past the end of the %d-byte body", HeaderInferenceHeaderLength, n, len(body))
		}
		header, bin, binaryMode = body[:n], body[n:], true
	}
	header = transport.TrimBOM(header)
	commas, _, over := tensorjson.CountValues(header, h.opts.Limits.MaxElements)
	if over {
		return Errorf(KindTooLarge, "Too many elements: the request's JSON holds more than the limit of %d values (send large tensors as binary data)", h.opts.Limits.MaxElements)
	}
	if err := q.ReserveBody(int64(len(body)), commas+1); err != nil {
		return err
	}
	ctx := q.Ctx
	began := core.TraceStart(ctx)
	req, err := parseRequest(header, bin, binaryMode, v)
	if err != nil {
		return err
	}
	req.BeginTrace(began)
	req.BypassCache(transport.NoCache(r.Header.Values("Cache-Control")))
	res, err := v.Run(q, &req.Request, h.opts.Limits.MaxStringBytes)
	if err != nil {
		return err
	}
	transport.SetCacheHeader(w.Header(), req.CacheStatus())
	defer core.TraceStep(ctx, core.StepEncode, core.TraceStart(ctx), 0)
	// The answer (binary outputs included) is written before the outputs
	// go back to the pools.
	defer res.Release()
	out, chunks, err := appendResponse(body[:0], v, req, res)
	if err != nil {
		h.log.Error("encode v2 outputs", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
		return &core.InferenceError{Err: err}
	}
	writeResponse(w, out, chunks)
	return nil
}

// writeJSON writes a 200 with a pre-encoded JSON body.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeResponse writes an inference response: the JSON header, then the
// binary outputs (if any) with the extension's header.
func writeResponse(w http.ResponseWriter, header []byte, chunks [][]byte) {
	if len(chunks) == 0 {
		writeJSON(w, header)
		return
	}
	total := len(header)
	for _, c := range chunks {
		total += len(c)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(HeaderInferenceHeaderLength, strconv.Itoa(len(header)))
	w.Header().Set("Content-Length", strconv.Itoa(total))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(header); err != nil {
		return
	}
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
	}
}

// jsonString appends s as a JSON string.
func jsonString(dst []byte, s string) []byte {
	return tensorjson.AppendJSON(dst, &tensor.Tensor{DType: tensor.String, Shape: []int64{}, Data: []string{s}})
}
