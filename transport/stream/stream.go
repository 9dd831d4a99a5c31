// Package stream serves the steps of sequences over WebSocket, for
// browsers and simple clients: one connection is one sequence. A binary
// message is one step's tensor of the streamed input (its own element
// type, little-endian; its shape the model's, with the axis left open
// given by the message's length), a text message is a JSON step that names
// any inputs, and each step's outputs come back as a JSON text message.
// The model's other inputs take the values of the URL's query (Silero VAD:
// ?sr=16000). svc keeps the state (core/seq). When the server stops, the
// step under way (and one already read) finishes and is answered, then the
// connection closes with status 1001 and the reason.
//
// Every connection is bounded: at most sequence.max_connections are open
// (an upgrade beyond gets a 429); with no step under way a message must
// begin within sequence.max_idle, and a message begun must be whole
// within limits.read_timeout, or the connection closes with 1008 and the
// reason; the URL's query and shape are checked before the upgrade.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/gorilla/mux"
	"github.com/rs/cors"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// Path is the WebSocket endpoint of the served model's sequences.
const Path = "/v2/models/{name}/stream"

// Prefix begins the id of a connection's sequence.
const Prefix = "ws-"

// Reasons the connection's sequence ends with.
const (
	ReasonClosed   = "ended when its WebSocket connection closed"
	ReasonStopping = "the server is stopping: the sequence ended; start a new one on a server that runs"
	// ReasonEnded closes a connection whose sequence svc ended (the model
	// was reloaded, the sequence expired, or the worker that held it
	// died): the step's error says which.
	ReasonEnded = "the sequence ended (the last step's error says why); connect again to start a new one"
)

// Options configure a Handler.
type Options struct {
	Model     *core.Model
	Sequences *seq.Store
	// Limits are the request limits; Limits.MaxBodyBytes caps one message
	// (limits.max_body_size).
	Limits transport.Limits
	// Memory is the server-wide budget of request memory (nil: none): each
	// step holds its share while it runs.
	Memory *budget.Memory
	// MaxIdle closes a connection that begins no message for this long
	// while no step is under way (sequence.max_idle; 0: seq.DefaultMaxIdle).
	MaxIdle time.Duration
	// ReadTimeout closes a connection whose message, begun, is not whole
	// within it (limits.read_timeout; 0: no bound).
	ReadTimeout time.Duration
	// MaxConnections bounds the open connections (sequence.max_connections;
	// 0: DefaultMaxConnections).
	MaxConnections int
	// AllowedOrigins are the origins besides the server's own whose pages
	// may open a stream (access.cors.allowed_origins, as CORS reads them).
	AllowedOrigins []string
	Logger         *zap.Logger
}

// DefaultMaxConnections is Options.MaxConnections' default.
const DefaultMaxConnections = 1000

// Handler serves Path.
type Handler struct {
	o       Options
	origins *cors.Cors // nil: no origin but the server's own
	// ids names the connections' sequences, apart from every other
	// process's (seq.IDs).
	ids      *seq.IDs
	life     *transport.Inferences
	live     atomic.Int64 // the connections upgraded or upgrading
	mu       sync.Mutex
	stopped  bool
	stopping chan struct{}
	open     sync.WaitGroup
}

// New returns the handler; Stop ends its connections.
func New(o Options) *Handler {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = seq.DefaultMaxIdle
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	o.Limits = o.Limits.Resolved()
	h := &Handler{o: o, stopping: make(chan struct{}), ids: seq.NewIDs(Prefix),
		life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}
	if len(o.AllowedOrigins) > 0 {
		h.origins = cors.New(cors.Options{AllowedOrigins: o.AllowedOrigins})
	}
	return h
}

// Routes is the endpoint (not in the banner's table: docs/sequences.md
// describes it).
func (h *Handler) Routes() []transport.Route {
	return []transport.Route{{Methods: []string{http.MethodGet}, Path: Path, Handler: h}}
}

// Stop makes every connection close once its step under way, and a step
// whose message was already read, are answered, and waits for them (or
// ctx). http.Server.Shutdown does not wait for WebSocket connections (they
// are hijacked): Stop is what does.
func (h *Handler) Stop(ctx context.Context) error {
	h.mu.Lock()
	if !h.stopped {
		h.stopped = true
		close(h.stopping)
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.open.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("WebSocket streams still open at the stop deadline: %w", ctx.Err())
	}
}

// Result is the JSON message that answers one step.
type Result struct {
	// Step counts the connection's steps from 0.
	Step int `json:"step"`
	// Outputs are the model's outputs but the states, by name.
	Outputs map[string]Tensor `json:"outputs,omitempty"`
	// Error says why the step failed (the connection goes on).
	Error string `json:"error,omitempty"`
}

// Tensor is one output: its shape and its elements in row-major order.
type Tensor struct {
	Shape []int64         `json:"shape"`
	Data  json.RawMessage `json:"data"`
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// ServeHTTP checks the request, then upgrades it and serves its sequence.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name := mux.Vars(r)["name"]; name != h.o.Model.Name() {
		httpError(w, http.StatusNotFound, fmt.Sprintf("Unknown model '%s'; this server serves '%s'", transport.Quote(name), h.o.Model.Name()))
		return
	}
	if err := h.checkOrigin(r); err != nil {
		httpError(w, http.StatusForbidden, err.Error())
		return
	}
	runner, err := h.o.Model.Runner()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	l := h.o.Sequences.Layout()
	if !l.Stateful() {
		httpError(w, http.StatusBadRequest, seq.ErrStateless.Error())
		return
	}
	p, err := newPlan(runner.Specs(), l, r.URL.Query(), h.o.Limits.MaxBodyBytes)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		httpError(w, http.StatusServiceUnavailable, "the server is stopping")
		return
	}
	h.open.Add(1)
	h.mu.Unlock()
	defer h.open.Done()
	defer h.live.Add(-1)
	if n := h.live.Add(1); n > int64(h.o.MaxConnections) {
		httpError(w, http.StatusTooManyRequests, fmt.Sprintf("%d WebSocket streams are open, the most that sequence.max_connections allows; close one, or try again later", h.o.MaxConnections))
		return
	}
	// The payload logger's hold, read before the upgrade: the request id
	// is in the answer's headers.
	payloads := transport.PayloadStreamOf(r.Context())
	// The origin is checked above, as the rest of the API checks it.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered
	}
	c.SetReadLimit(h.o.Limits.MaxBodyBytes)
	h.serve(c, p, runner.Info(), payloads)
}

// checkOrigin lets a browser's page open a stream when it comes from the
// server's own origin or one that access.cors.allowed_origins allows (as
// CORS allows the rest of the API); clients that are no browser send no
// Origin and pass.
func (h *Handler) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	if h.origins != nil && h.origins.OriginAllowed(r) {
		return nil
	}
	return fmt.Errorf("a page of origin '%s' may not open a stream: it is not this server's origin, and access.cors.allowed_origins does not allow it", transport.Quote(origin))
}

type message struct {
	kind websocket.MessageType
	data []byte
	err  error
}

// conn is one connection's sequence.
type conn struct {
	h       *Handler
	c       *websocket.Conn
	p       *plan
	info    core.ModelInfo
	id      string
	started bool
	step    int
	w       *watch
	// payloads logs each step's message and its answer (nil: no payload
	// logger).
	payloads transport.PayloadStream
}

// Content types of the steps' messages for the payload logger: a text
// message is JSON, a binary one a tensor's bytes.
const (
	contentTypeText   = "application/json"
	contentTypeBinary = "application/octet-stream"
)

func (h *Handler) serve(c *websocket.Conn, p *plan, info core.ModelInfo, payloads transport.PayloadStream) {
	ctx, cancel := context.WithCancel(context.Background())
	k := &conn{h: h, c: c, p: p, info: info, id: h.ids.Next(), w: newWatch(h.o.MaxIdle, h.o.ReadTimeout, nil), payloads: payloads}
	msgs := make(chan message)
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		k.read(ctx, msgs)
	}()
	defer func() {
		cancel()
		_ = c.CloseNow()
		<-reading
		k.w.stop()
		if k.started {
			h.o.Sequences.End(k.id, ReasonClosed)
		}
	}()
	for {
		// Stopping is checked between steps, before a message is taken.
		select {
		case <-h.stopping:
			k.stop(ctx, msgs)
			return
		default:
		}
		var m message
		select {
		case <-h.stopping:
			k.stop(ctx, msgs)
			return
		case <-k.w.C():
			if why, ok := k.w.expired(); ok {
				_ = c.Close(websocket.StatusPolicyViolation, why)
				return
			}
			continue
		case m = <-msgs:
		}
		if m.err != nil {
			return
		}
		if !k.answer(ctx, m) {
			return
		}
		k.w.answered()
	}
}

// read reads the connection's messages into msgs until it fails or ctx
// ends, telling the watch when each begins and when it is whole.
func (k *conn) read(ctx context.Context, msgs chan<- message) {
	for {
		kind, r, err := k.c.Reader(ctx)
		var data []byte
		if err == nil {
			k.w.begin()
			data, err = io.ReadAll(r)
		}
		if err == nil {
			k.w.read()
		}
		select {
		case msgs <- message{kind, data, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// stop answers the message already read, if one is, then closes the
// connection with 1001 and why.
func (k *conn) stop(ctx context.Context, msgs <-chan message) {
	select {
	case m := <-msgs:
		if m.err == nil && !k.answer(ctx, m) {
			return
		}
	default:
	}
	_ = k.c.Close(websocket.StatusGoingAway, ReasonStopping)
}

// answer runs the message's step and writes its result; false when the
// connection is over.
func (k *conn) answer(ctx context.Context, m message) bool {
	// A step's lifecycle is a request's, counted by the sequences' own
	// metrics.
	q := k.h.life.Step(ctx)
	defer q.End()
	ctx = q.Ctx
	res := Result{Step: k.step}
	answered := k.logStep(m)
	k.step++
	var inputs []*tensor.Tensor
	var err error
	if m.kind == websocket.MessageBinary {
		inputs, err = k.p.binary(m.data)
	} else {
		inputs, err = k.p.text(m.data)
	}
	if err == nil {
		var outs []*tensor.Tensor
		outs, err = k.h.o.Sequences.Step(ctx, seq.Step{ID: k.id, Start: !k.started, Inputs: inputs})
		if err == nil {
			k.started = true
			res.Outputs = k.outputs(outs)
		}
	}
	// A sequence that svc ended is not started again under the client:
	// the connection closes once the step's error is written.
	var gone *seq.UnknownError
	ended := errors.As(err, &gone) && gone.Reason != ""
	if err != nil {
		res.Error = err.Error()
	}
	body, err := json.Marshal(res)
	if err != nil {
		k.h.o.Logger.Error("encode a stream's step", zap.Error(err))
		_ = k.c.Close(websocket.StatusInternalError, "cannot encode the step's outputs")
		return false
	}
	// A client that takes no answer for sequence.max_idle holds the
	// connection as one that sends nothing would: it closes.
	wctx, cancel := context.WithTimeout(ctx, k.h.o.MaxIdle)
	defer cancel()
	err = k.c.Write(wctx, websocket.MessageText, body)
	answered(contentTypeText, body)
	if err != nil {
		return false
	}
	if ended {
		_ = k.c.Close(websocket.StatusNormalClosure, ReasonEnded)
		return false
	}
	return true
}

// logStep logs the step's message for the payload logger, and returns
// what logs its answer.
func (k *conn) logStep(m message) func(contentType string, data []byte) {
	if k.payloads == nil {
		return func(string, []byte) {}
	}
	ct := contentTypeText
	if m.kind == websocket.MessageBinary {
		ct = contentTypeBinary
	}
	return k.payloads.Request(k.step, ct, m.data)
}

// outputs are a step's outputs but the states, each's data a flat JSON
// array written as every JSON protocol of svc writes numbers.
func (k *conn) outputs(outs []*tensor.Tensor) map[string]Tensor {
	l := k.h.o.Sequences.Layout()
	res := map[string]Tensor{}
	for i, t := range outs {
		if l.StateOutput(i) {
			continue
		}
		flat := &tensor.Tensor{DType: t.DType, Shape: []int64{int64(t.Len())}, Data: t.Data}
		res[k.info.Outputs[i].Name] = Tensor{Shape: t.Shape, Data: json.RawMessage(tensorjson.AppendJSON(nil, flat))}
	}
	return res
}
