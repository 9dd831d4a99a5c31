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
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
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
	// MaxMessageBytes caps one message (limits.max_body_size).
	MaxMessageBytes int64
	Logger          *zap.Logger
}

// Handler serves Path.
type Handler struct {
	o        Options
	conns    atomic.Uint64
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
	return &Handler{o: o, stopping: make(chan struct{})}
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
	p, err := newPlan(runner.Specs(), l, r.URL.Query())
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
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered
	}
	c.SetReadLimit(h.o.MaxMessageBytes)
	h.serve(c, p, runner.Info())
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
}

func (h *Handler) serve(c *websocket.Conn, p *plan, info core.ModelInfo) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := &conn{h: h, c: c, p: p, info: info, id: Prefix + strconv.FormatUint(h.conns.Add(1), 10)}
	defer func() {
		if k.started {
			h.o.Sequences.End(k.id, ReasonClosed)
		}
	}()
	msgs := make(chan message)
	go func() {
		for {
			kind, data, err := c.Read(ctx)
			select {
			case msgs <- message{kind, data, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
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
		case m = <-msgs:
		}
		if m.err != nil {
			_ = c.CloseNow()
			return
		}
		if !k.answer(ctx, m) {
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
	res := Result{Step: k.step}
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
	if err := k.c.Write(ctx, websocket.MessageText, body); err != nil {
		return false
	}
	if ended {
		_ = k.c.Close(websocket.StatusNormalClosure, ReasonEnded)
		return false
	}
	return true
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
