// Package repository is the model-repository extension of the Open
// Inference Protocol as Triton answers it, over the one model svc serves:
// POST /v2/repository/index lists it with its state, POST
// /v2/repository/models/{name}/load reloads it from its source (a hot
// reload: the old version serves until the new one is ready), and POST
// /v2/repository/models/{name}/unload is refused (svc serves one model;
// stopping the server unloads it). Errors are the protocol's {"error"}.
package repository

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/gorilla/mux"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

// The paths (gorilla/mux templates).
const (
	PathIndex  = "/v2/repository/index"
	PathLoad   = "/v2/repository/models/{name}/load"
	PathUnload = "/v2/repository/models/{name}/unload"
)

// plainName is a model name that needs no escaping in a path.
var plainName = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// The states of an index entry, Triton's names.
const (
	StateReady       = "READY"
	StateLoading     = "LOADING"
	StateUnavailable = "UNAVAILABLE"
)

// Entry is one row of the repository index.
type Entry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
}

// Reloader reloads the served model: the model itself in a process that
// serves alone, the supervisor (every worker, one at a time) under
// --workers.
type Reloader interface {
	Reload(ctx context.Context) (core.ReloadResult, error)
}

// Handler serves the repository routes.
type Handler struct {
	model    *core.Model
	reloader Reloader
	log      *zap.Logger
}

// New returns the handler; reloader nil reloads model itself.
func New(model *core.Model, reloader Reloader, log *zap.Logger) *Handler {
	if reloader == nil {
		reloader = model
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Handler{model: model, reloader: reloader, log: log}
}

// Module adds the repository routes; a Reloader supplied to the graph
// replaces the model's own reload.
var Module = fx.Module("repository", fx.Provide(
	func(p struct {
		fx.In
		Model    *core.Model
		Reloader Reloader `optional:"true"`
		Log      *zap.Logger
	}) *Handler {
		return New(p.Model, p.Reloader, p.Log)
	},
	transport.AsRoutes(func(h *Handler) []transport.Route { return h.Routes() }),
))

// Routes are the repository endpoints; their 404 and 405 answer in the
// protocol's form.
func (h *Handler) Routes() []transport.Route {
	post := []string{http.MethodPost}
	load := transport.Route{Methods: post, Path: PathLoad, Purpose: "Reload the model (v2)", Order: 121, Handler: http.HandlerFunc(h.serveLoad)}
	routes := []transport.Route{
		{Methods: post, Path: PathIndex, Purpose: "Model repository index (v2)", Order: 120, Handler: http.HandlerFunc(h.serveIndex)},
		{Methods: post, Path: PathUnload, Handler: http.HandlerFunc(h.serveUnload)},
	}
	if name := h.model.Name(); plainName.MatchString(name) {
		// The banner shows the load path with the model's name in it.
		named := load
		named.Path = strings.Replace(PathLoad, "{name}", name, 1)
		load.Purpose = ""
		routes = append(routes, named)
	}
	routes = append(routes, load)
	for i := range routes {
		routes[i].Errors = writeError
	}
	return routes
}

// Index lists the served model: the version that serves (READY), or its
// state while it cannot serve; below it a reload under way (LOADING) or
// the last reload's failure (UNAVAILABLE, with the reason).
func (h *Handler) Index() []Entry {
	name := h.model.Name()
	out := []Entry{}
	switch s := h.model.State(); s {
	case core.StateReady, core.StateDraining:
		e := Entry{Name: name, State: StateReady}
		if g := h.model.Current(); g != nil {
			e.Version = g.Version
		}
		if s == core.StateDraining {
			e.State, e.Reason = StateUnavailable, "draining: the server is shutting down"
		}
		out = append(out, e)
	case core.StateFailed:
		reason := "failed to load"
		if err := h.model.Err(); err != nil {
			reason = err.Error()
		}
		return append(out, Entry{Name: name, State: StateUnavailable, Reason: reason})
	default:
		return append(out, Entry{Name: name, State: StateLoading, Reason: s.String()})
	}
	rs := h.model.ReloadStatus()
	switch {
	case rs.Loading:
		out = append(out, Entry{Name: name, State: StateLoading, Reason: "reloading"})
	case rs.LastError != nil:
		out = append(out, Entry{Name: name, State: StateUnavailable, Reason: rs.LastError.Error()})
	}
	return out
}

// Ready keeps only the entries that are READY.
func Ready(entries []Entry) []Entry {
	kept := []Entry{}
	for _, e := range entries {
		if e.State == StateReady {
			kept = append(kept, e)
		}
	}
	return kept
}

type indexRequest struct {
	// Ready, when true, lists only the entries that are READY.
	Ready bool `json:"ready"`
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	var req indexRequest
	if status, msg := readJSON(r, &req); status != 0 {
		writeError(w, status, msg)
		return
	}
	entries := h.Index()
	if req.Ready {
		entries = Ready(entries)
	}
	writeJSON(w, http.StatusOK, entries)
}

// LoadResponse answers a load that succeeded: the version now served.
type LoadResponse struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
}

// Error is a repository call that failed: the HTTP status that answers
// it (gRPC maps it to its code) and why.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func (h *Handler) unknown(name string) error {
	if name == h.model.Name() {
		return nil
	}
	return &Error{http.StatusNotFound, fmt.Sprintf("Unknown model '%s'; this server serves '%s'", transport.Quote(name), h.model.Name())}
}

// Load reloads the model named name from its source (a hot reload) and
// says which version then serves; params says whether the call carried
// parameters, which svc refuses. Its errors are *Error.
func (h *Handler) Load(ctx context.Context, name string, params bool) (LoadResponse, error) {
	if err := h.unknown(name); err != nil {
		return LoadResponse{}, err
	}
	if params {
		return LoadResponse{}, &Error{http.StatusBadRequest, "svc reloads the model from its source as configured: a load takes no parameters (no config or file override)"}
	}
	res, err := h.reloader.Reload(ctx)
	var re *core.ReloadError
	switch {
	case err == nil:
		return LoadResponse{Name: h.model.Name(), Version: res.Version, State: StateReady}, nil
	case errors.As(err, &re):
		// Triton's answer to a model that fails to load.
		return LoadResponse{}, &Error{http.StatusBadRequest, err.Error()}
	case errors.Is(err, core.ErrNotReady), errors.Is(err, core.ErrReloadClosed):
		return LoadResponse{}, &Error{http.StatusServiceUnavailable, err.Error()}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return LoadResponse{}, &Error{http.StatusServiceUnavailable, "The reload goes on; the request ended before it did: " + err.Error()}
	default:
		h.log.Error("reload", zap.Error(err))
		return LoadResponse{}, &Error{http.StatusServiceUnavailable, err.Error()}
	}
}

// Unload is refused: svc serves one model. Its error is an *Error.
func (h *Handler) Unload(name string) error {
	if err := h.unknown(name); err != nil {
		return err
	}
	return &Error{http.StatusBadRequest, fmt.Sprintf("svc serves one model: unloading '%s' is refused; stop the server to unload it, or load to reload it", name)}
}

// pathName is the model named in the path: a route with the model's name
// in its path has none to read.
func (h *Handler) pathName(r *http.Request) string {
	if name, ok := mux.Vars(r)["name"]; ok {
		return name
	}
	return h.model.Name()
}

func (h *Handler) serveLoad(w http.ResponseWriter, r *http.Request) {
	name := h.pathName(r)
	if err := h.unknown(name); err != nil {
		writeFailure(w, err)
		return
	}
	var req map[string]json.RawMessage
	if status, msg := readJSON(r, &req); status != 0 {
		writeError(w, status, msg)
		return
	}
	_, params := req["parameters"]
	res, err := h.Load(r.Context(), name, params)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *Handler) serveUnload(w http.ResponseWriter, r *http.Request) {
	writeFailure(w, h.Unload(h.pathName(r)))
}

// writeFailure answers with an *Error's status and message.
func writeFailure(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var e *Error
	if errors.As(err, &e) {
		status = e.Status
	}
	writeError(w, status, err.Error())
}

// maxRequest bounds the small JSON bodies these routes take.
const maxRequest = 64 << 10

// readJSON decodes an optional JSON object body into v, read as every
// HTTP frontend reads its bodies (transport.ReadBody); a refusal comes
// with the status and the message to answer with (status 0: none).
func readJSON(r *http.Request, v any) (status int, msg string) {
	b, err := transport.ReadBody(r, maxRequest)
	defer transport.PutBody(b)
	if err != nil {
		return transport.BodyError(err, maxRequest)
	}
	if b := bytes.TrimSpace(transport.TrimBOM(b)); len(b) > 0 {
		if err := json.Unmarshal(b, v); err != nil {
			return http.StatusBadRequest, "The request body is not a JSON object: " + err.Error()
		}
	}
	return 0, ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError writes the protocol's {"error"} body.
func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
