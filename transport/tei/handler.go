// Package tei serves a text model in the shape of Hugging Face's
// text-embeddings-inference (TEI), on the routes that do not clash with
// svc's own: POST /embed, /rerank, /tokenize and /decode, with TEI's
// errors {"error", "error_type"} and its statuses. It runs the texts
// through core/codec's Text, batched by tokens, within the request
// lifecycle every protocol shares (transport.Inferences).
package tei

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/transport"
)

// The paths.
const (
	PathEmbed    = "/embed"
	PathRerank   = "/rerank"
	PathTokenize = "/tokenize"
	PathDecode   = "/decode"
)

// TEI's error types, and the statuses it answers them with.
const (
	ErrValidation = "Validation" // 413
	ErrTokenizer  = "Tokenizer"  // 422
	ErrEmpty      = "Empty"      // 400
	ErrOverloaded = "Overloaded" // 429
	ErrUnhealthy  = "Unhealthy"  // 503
	ErrBackend    = "Backend"    // 424
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
	opts Options
	life *transport.Inferences
	log  *zap.Logger
}

type view struct{ x *codec.Text }

// NewHandler returns the handler; the model may still be loading.
func NewHandler(o Options) (*Handler, error) {
	if o.Model == nil {
		return nil, errors.New("tei: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.Limits = o.Limits.Resolved()
	return &Handler{opts: o, log: o.Logger, life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}, nil
}

// Prepare derives the handler's view of a loaded generation.
func (h *Handler) Prepare(r core.Runner) (any, error) {
	set, err := h.opts.Codec.For(r)
	if err != nil {
		return nil, err
	}
	return &view{x: set.Text()}, nil
}

// Routes are the routes, not in the banner's table (docs/text.md lists
// them).
func (h *Handler) Routes() []transport.Route {
	route := func(path string, serve func(http.ResponseWriter, *http.Request, *transport.Inference, *codec.Text, []byte) error) transport.Route {
		return transport.Route{Methods: []string{http.MethodPost}, Path: path, Errors: WriteError, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.serve(w, r, serve)
		})}
	}
	return []transport.Route{route(PathEmbed, h.embed), route(PathRerank, h.rerank), route(PathTokenize, h.tokenize), route(PathDecode, h.decode)}
}

// serve runs one request through the lifecycle: the generation's view,
// the body within the limits, then serve, whose error is answered in
// TEI's shape.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request, *transport.Inference, *codec.Text, []byte) error) {
	q := h.life.Begin(r.Context())
	defer q.End()
	g, err := h.opts.Model.Acquire()
	if err != nil {
		q.Outcome = core.OutcomeNotReady
		h.fail(w, r, err)
		return
	}
	defer g.Release()
	v, ok := core.ViewOf[*view](g)
	if !ok || v.x == nil {
		q.Outcome = core.OutcomeBadRequest
		writeErr(w, &apiError{Status: http.StatusBadRequest, Type: ErrValidation, Message: "The served model takes no text: it is not served through this API (see /info)"})
		return
	}
	body, err := q.ReadBody(w, r)
	defer transport.PutBody(body)
	if err != nil {
		status, msg := transport.BodyError(err, h.opts.Limits.MaxBodyBytes)
		transport.SetRetryAfter(w.Header(), err)
		q.Outcome = outcomeOf(err)
		writeErr(w, &apiError{Status: status, Type: typeOf(status), Message: msg})
		return
	}
	if err := serve(w, r, q, v.x, transport.TrimBOM(body)); err != nil {
		q.Outcome = outcomeOf(err)
		h.fail(w, r, err)
		return
	}
	q.Outcome = core.OutcomeSuccess
}

// apiError is an error in TEI's shape, with its status.
type apiError struct {
	Status     int
	Type       string
	Message    string
	unexpected bool
}

func (e *apiError) Error() string { return e.Message }

// invalid is a body TEI's routes cannot read: 422, as TEI's JSON
// extractor answers.
func invalid(format string, a ...any) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Type: ErrValidation, Message: fmt.Sprintf(format, a...)}
}

// empty is an empty input: 400 Empty.
func empty(format string, a ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: ErrEmpty, Message: fmt.Sprintf(format, a...)}
}

// typeOf is TEI's error type for a status.
func typeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return ErrEmpty
	case http.StatusUnprocessableEntity:
		return ErrTokenizer
	case http.StatusTooManyRequests:
		return ErrOverloaded
	case http.StatusServiceUnavailable:
		return ErrUnhealthy
	case http.StatusFailedDependency, http.StatusInternalServerError:
		return ErrBackend
	}
	return ErrValidation
}

// fromCore is err in TEI's shape: a refused input is Validation (413, as
// TEI refuses an input too long or a batch too large); a busy server is
// Overloaded (429), one not ready Unhealthy (503); a failed run Backend
// (424); a request past its deadline 504, as svc answers it.
func fromCore(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	status, msg, known := transport.ErrorStatus(err)
	var (
		input *core.InputError
		limit *core.LimitError
		busy  *core.BusyError
		infer *core.InferenceError
	)
	switch {
	case errors.As(err, &input), errors.As(err, &limit):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: ErrValidation, Message: msg}
	case errors.As(err, &busy):
		return &apiError{Status: http.StatusTooManyRequests, Type: ErrOverloaded, Message: msg}
	case errors.As(err, &infer) || !known:
		return &apiError{Status: http.StatusFailedDependency, Type: ErrBackend, Message: msg, unexpected: !known}
	}
	return &apiError{Status: status, Type: typeOf(status), Message: msg}
}

// outcomeOf is how a request that failed with err ended.
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

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := fromCore(err)
	if e.unexpected {
		h.log.Error("tei", zap.String("path", r.URL.Path), zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
	}
	transport.SetRetryAfter(w.Header(), err)
	writeErr(w, e)
}

// WriteError writes status and msg in TEI's shape: the router's 404 and
// 405 on TEI's paths.
func WriteError(w http.ResponseWriter, status int, msg string) {
	writeErr(w, &apiError{Status: status, Type: typeOf(status), Message: msg})
}

func writeErr(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, struct {
		Error string `json:"error"`
		Type  string `json:"error_type"`
	}{e.Message, e.Type})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed","error_type":"Backend"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// fields reads a JSON object's fields, refusing anything but an object
// and a field not among known.
func fields(body []byte, known ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		what := "null"
		if err != nil {
			what = err.Error()
		}
		return nil, invalid("Failed to deserialize the JSON body: not a JSON object: %s", what)
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid("Failed to deserialize the JSON body: unknown field `%s`, expected one of %v", transport.Quote(unknown[0]), known)
	}
	return m, nil
}

// present reports whether a field was sent with a value (null is none).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// field decodes the field name of m into v when present (want names its
// kind in the message).
func field(m map[string]json.RawMessage, name string, v any, want string) error {
	raw := m[name]
	if !present(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("Failed to deserialize the JSON body: `%s`: expected %s, got %s", name, want, transport.Quote(string(raw)))
	}
	return nil
}
