// Package openai serves a text model in the shape OpenAI-compatible
// servers answer in: POST /v1/embeddings and GET /v1/models as OpenAI's
// API has them (the OpenAI SDKs' embeddings.create, LangChain's
// OpenAIEmbeddings), and POST /v1/rerank in Cohere's and Jina's shape, as
// the servers beside OpenAI's routes (LiteLLM, Infinity) serve it; its
// errors are OpenAI's {"error": {"message", "type", "param", "code"}}. It
// runs the texts through core/codec's Text, batched by tokens, within
// the request lifecycle every protocol shares (transport.Inferences).
package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/transport"
)

// The paths.
const (
	PathEmbeddings = "/v1/embeddings"
	PathModels     = "/v1/models"
	PathRerank     = "/v1/rerank"
)

// Options configure a Handler.
type Options struct {
	Model  *core.Model
	Codec  *codec.Codec
	Limits transport.Limits
	Memory *budget.Memory
	Logger *zap.Logger
}

// Handler serves the routes.
type Handler struct {
	opts    Options
	life    *transport.Inferences
	log     *zap.Logger
	created int64
}

// view is what the handler derives from a generation: the model's text,
// nil when it takes none.
type view struct {
	x *codec.Text
}

// NewHandler returns the handler; the model may still be loading.
func NewHandler(o Options) (*Handler, error) {
	if o.Model == nil {
		return nil, errors.New("openai: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.Limits = o.Limits.Resolved()
	return &Handler{opts: o, log: o.Logger, created: time.Now().Unix(),
		life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}, nil
}

// Prepare derives the handler's view of a loaded generation: a
// core.Preparer.
func (h *Handler) Prepare(r core.Runner) (any, error) {
	set, err := h.opts.Codec.For(r)
	if err != nil {
		return nil, err
	}
	return &view{x: set.Text()}, nil
}

// Routes are the routes: not in the banner's table (they answer a text
// model only; docs/text.md lists them). They answer their own errors in
// OpenAI's shape, but do not claim /v1's 404s and 405s: /v1 is no
// segment of svc's own, and a path there that no route serves is
// answered as any other unknown path ({"detail": "Not Found"}).
func (h *Handler) Routes() []transport.Route {
	return []transport.Route{
		{Methods: []string{http.MethodPost}, Path: PathEmbeddings, Handler: h.serve(h.serveEmbeddings)},
		{Methods: []string{http.MethodGet}, Path: PathModels, Handler: http.HandlerFunc(h.models)},
		{Methods: []string{http.MethodGet}, Path: PathModels + "/{model}", Handler: http.HandlerFunc(h.model)},
		{Methods: []string{http.MethodPost}, Path: PathRerank, Handler: h.serve(h.serveRerank)},
	}
}

// modelObject is a model as /v1/models lists it.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (h *Handler) modelObject() modelObject {
	return modelObject{ID: h.opts.Model.Name(), Object: "model", Created: h.created, OwnedBy: "svc"}
}

func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelObject{h.modelObject()}})
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["model"]
	if name != h.opts.Model.Name() {
		writeErr(w, modelNotFound(name))
		return
	}
	writeJSON(w, http.StatusOK, h.modelObject())
}

// serve runs a POST route through the request's lifecycle: the loaded
// generation's view and the body read within the limits, answered here
// when either fails, then route, which answers and says how it ended.
func (h *Handler) serve(route func(http.ResponseWriter, *http.Request, *transport.Inference, *view, []byte) core.Outcome) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := h.life.Begin(r.Context())
		defer q.End()
		g, err := h.opts.Model.Acquire()
		if err != nil {
			q.Outcome = core.OutcomeNotReady
			writeErr(w, fromCore(err))
			return
		}
		defer g.Release()
		v, found := core.ViewOf[*view](g)
		if !found || v.x == nil {
			q.Outcome = core.OutcomeBadRequest
			writeErr(w, &apiError{Status: http.StatusBadRequest, Message: "The served model takes no text: it is not served through this API (see /info)"})
			return
		}
		body, err := q.ReadBody(w, r)
		defer transport.PutBody(body)
		if err != nil {
			status, msg := transport.BodyError(err, h.opts.Limits.MaxBodyBytes)
			transport.SetRetryAfter(w.Header(), err)
			q.Outcome = outcomeOf(err)
			writeErr(w, &apiError{Status: status, Message: msg, Code: codeOf(status)})
			return
		}
		q.Outcome = route(w, r, q, v, transport.TrimBOM(body))
	})
}

// checkModel refuses a request for another model than the one served
// (none named is the one served).
func (h *Handler) checkModel(name string) error {
	if name != "" && name != h.opts.Model.Name() {
		return modelNotFound(name)
	}
	return nil
}

// fail answers err and says how the request ended.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) core.Outcome {
	e := fromCore(err)
	if e.unexpected {
		h.log.Error("openai", zap.String("path", r.URL.Path), zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
	}
	transport.SetRetryAfter(w.Header(), err)
	writeErr(w, e)
	return outcomeOf(err)
}

// outcomeOf is how a request that failed with err ended: refused unless
// the server was busy or failed, or the request ended first.
func outcomeOf(err error) core.Outcome {
	var e *apiError
	if errors.As(err, &e) {
		return core.OutcomeBadRequest
	}
	if o := core.OutcomeOf(err); o != core.OutcomeInference {
		return o
	}
	var ie *core.InferenceError
	if errors.As(err, &ie) {
		return core.OutcomeInference
	}
	return core.OutcomeBadRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":{"message":%q,"type":"server_error","param":null,"code":null}}`, err.Error()))
		status = http.StatusInternalServerError
	}
	writeBody(w, status, b)
}

func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
