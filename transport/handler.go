// Package transport is svc's HTTP layer: routes, request decoding, error
// mapping, access logging and the server's lifecycle.
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Model is what the handler needs from the predictor.
type Model interface {
	Info() core.ModelInfo
	Specs() []tensor.Spec
	Predict(ctx context.Context, inputs []*tensor.Tensor) (*core.Result, error)
}

// BodyValidator checks a /predict body before it is decoded; its error text
// is the client-facing message of a 400.
type BodyValidator interface {
	ValidateBody(ctx context.Context, body []byte) error
}

// Mounter adds routes (such as the documentation pages) to the router.
type Mounter interface {
	Register(r *mux.Router)
}

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	Model        Model
	Metrics      func() core.Metrics
	Validator    BodyValidator // optional
	Mounts       []Mounter     // optional
	MaxBodyBytes int64
	Logger       *zap.Logger
	// Headers are added to every response (e.g. X-Worker-Id).
	Headers map[string]string
}

// Handler serves the service's endpoints.
type Handler struct {
	opts    HandlerOptions
	router  *mux.Router
	health  []byte
	info    []byte
	bufPool sync.Pool
	log     *zap.Logger
}

var _ http.Handler = (*Handler)(nil)

// NewHandler builds the router.
func NewHandler(o HandlerOptions) (*Handler, error) {
	if o.Model == nil {
		return nil, errors.New("transport: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	h := &Handler{opts: o, log: o.Logger}
	info := o.Model.Info()
	var err error
	if h.health, err = json.Marshal(core.Health{Status: "healthy", Model: info.Name}); err != nil {
		return nil, fmt.Errorf("encode health: %w", err)
	}
	if h.info, err = json.Marshal(info); err != nil {
		return nil, fmt.Errorf("encode info: %w", err)
	}
	h.bufPool.New = func() any { b := make([]byte, 0, 64<<10); return &b }

	r := mux.NewRouter()
	r.HandleFunc("/predict", h.predict).Methods(http.MethodPost)
	r.HandleFunc("/health", h.serveHealth).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/info", h.serveInfo).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/metrics", h.serveMetrics).Methods(http.MethodGet, http.MethodHead)
	for _, m := range o.Mounts {
		m.Register(r)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found")
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if allowed := allowedMethods(r, req); allowed != "" {
			w.Header().Set("Allow", allowed)
		}
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	})
	var extra func(http.ResponseWriter)
	if len(o.Headers) > 0 {
		extra = func(w http.ResponseWriter) {
			for k, v := range o.Headers {
				w.Header().Set(k, v)
			}
		}
	}
	r.Use(mux.MiddlewareFunc(accessLog(o.Logger, extra)))
	h.router = r
	// The router's middleware does not run for 404/405, so wrap those too.
	r.NotFoundHandler = accessLog(o.Logger, extra)(r.NotFoundHandler)
	r.MethodNotAllowedHandler = accessLog(o.Logger, extra)(r.MethodNotAllowedHandler)
	return h, nil
}

// allowedMethods lists the methods registered for the request's path.
func allowedMethods(r *mux.Router, req *http.Request) string {
	var methods []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		probe := req.Clone(req.Context())
		probe.Method = m
		var match mux.RouteMatch
		if r.Match(probe, &match) && match.MatchErr == nil {
			methods = append(methods, m)
		}
	}
	return strings.Join(methods, ", ")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.router.ServeHTTP(w, r) }

func (h *Handler) serveHealth(w http.ResponseWriter, _ *http.Request) { writeJSON(w, h.health) }
func (h *Handler) serveInfo(w http.ResponseWriter, _ *http.Request)   { writeJSON(w, h.info) }

func (h *Handler) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	var m core.Metrics
	if h.opts.Metrics != nil {
		m = h.opts.Metrics()
	}
	if m.AvailableProviders == nil {
		m.AvailableProviders = []string{}
	}
	if m.CompiledProviders == nil {
		m.CompiledProviders = []string{}
	}
	body, err := json.Marshal(m)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	writeJSON(w, body)
}

// isJSON accepts application/json and application/*+json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func (h *Handler) predict(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		if ct == "" {
			writeError(w, http.StatusUnsupportedMediaType, "Missing Content-Type: send the body as application/json")
		} else {
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Unsupported Content-Type '%s': send the body as application/json", truncate(ct, 100)))
		}
		return
	}
	bufp := h.bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= 64<<20 {
			h.bufPool.Put(bufp)
		}
	}()
	body, err := readBody(r, (*bufp)[:0], h.opts.MaxBodyBytes)
	*bufp = body[:0]
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body too large: the limit is %s", formatBytes(h.opts.MaxBodyBytes)))
			return
		}
		writeError(w, http.StatusBadRequest, "Could not read request body: "+err.Error())
		return
	}
	if h.opts.Validator != nil {
		if err := h.opts.Validator.ValidateBody(r.Context(), body); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	inputs, err := tensor.DecodeRequest(body, h.opts.Model.Specs())
	if err != nil {
		var te *tensor.Error
		if errors.As(err, &te) {
			writeError(w, http.StatusBadRequest, te.Message)
			return
		}
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := h.opts.Model.Predict(r.Context(), inputs)
	if err != nil {
		h.writePredictError(w, err)
		return
	}
	defer res.Close()
	out, err := res.AppendJSON(body[:0])
	*bufp = out[:0]
	if err != nil {
		h.log.Error("encode outputs", zap.Error(err), zap.String("request_id", w.Header().Get(RequestIDHeader)))
		writeError(w, http.StatusInternalServerError, "Inference failed: "+err.Error())
		return
	}
	writeJSON(w, out)
}

func (h *Handler) writePredictError(w http.ResponseWriter, err error) {
	var (
		timeout *core.TimeoutError
		infer   *core.InferenceError
	)
	switch {
	case errors.As(err, &timeout):
		writeError(w, http.StatusGatewayTimeout, timeout.Error())
	case errors.As(err, &infer):
		writeError(w, http.StatusInternalServerError, infer.Error())
	case errors.Is(err, core.ErrCanceled):
		// The client went away or the server is stopping; 503 if anyone
		// is still listening.
		writeError(w, http.StatusServiceUnavailable, "Request canceled before inference finished")
	default:
		h.log.Error("predict", zap.Error(err), zap.String("request_id", w.Header().Get(RequestIDHeader)))
		writeError(w, http.StatusInternalServerError, "Inference failed: "+err.Error())
	}
}

// readBody reads the whole body into buf, enforcing limit.
func readBody(r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength > 0 && int64(cap(buf)) < r.ContentLength {
		buf = make([]byte, 0, r.ContentLength)
	}
	body := http.MaxBytesReader(nil, r.Body, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			return buf, err
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
