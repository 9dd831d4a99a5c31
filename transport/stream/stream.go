// Package stream serves the steps of sequences over WebSocket, for
// browsers and simple clients: one connection is one sequence, each binary
// message is one step's audio (float32 little-endian samples), and each
// step's outputs come back as a JSON text message. The model's other
// inputs take the values of the URL's query (Silero VAD: ?sr=16000). svc
// keeps the state (core/seq). When the server stops, the step under way
// finishes and the connection closes with status 1001 and the reason.
package stream

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// Stop makes every connection close once its step under way is over, and
// waits for them (or ctx).
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
	Shape []int64 `json:"shape"`
	Data  any     `json:"data"`
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
	p, err := newPlan(runner, l, r.URL.Query())
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

func (h *Handler) serve(c *websocket.Conn, p *plan, info core.ModelInfo) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id := Prefix + strconv.FormatUint(h.conns.Add(1), 10)
	started := false
	defer func() {
		if started {
			h.o.Sequences.End(id, ReasonClosed)
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
	l := h.o.Sequences.Layout()
	for step := 0; ; step++ {
		var m message
		select {
		case <-h.stopping:
			_ = c.Close(websocket.StatusGoingAway, ReasonStopping)
			return
		case m = <-msgs:
		}
		if m.err != nil {
			_ = c.CloseNow()
			return
		}
		res := Result{Step: step}
		inputs, err := p.inputs(m.kind, m.data)
		if err == nil {
			var outs []*tensor.Tensor
			outs, err = h.o.Sequences.Step(ctx, seq.Step{ID: id, Start: !started, Inputs: inputs})
			if err == nil {
				started = true
				res.Outputs = map[string]Tensor{}
				for i, t := range outs {
					if !l.StateOutput(i) {
						res.Outputs[info.Outputs[i].Name] = Tensor{Shape: t.Shape, Data: t.Data}
					}
				}
			}
		}
		if err != nil {
			res.Error = err.Error()
		}
		body, err := json.Marshal(res)
		if err != nil {
			h.o.Logger.Error("encode a stream's step", zap.Error(err))
			_ = c.Close(websocket.StatusInternalError, "cannot encode the step's outputs")
			return
		}
		if err := c.Write(ctx, websocket.MessageText, body); err != nil {
			return
		}
	}
}

// plan is how a connection's messages become the model's inputs: the
// audio input takes each binary message; the others their query values.
type plan struct {
	audio  int
	rank   int
	fixed  []*tensor.Tensor // by input; nil for the audio and the states
	inputN int
}

// newPlan resolves the query against the model: input=NAME picks the
// input that takes the audio (default: the first float32 input that is no
// state); every other input that is no state takes NAME=VALUE, a scalar.
func newPlan(r core.Runner, l *seq.Layout, q map[string][]string) (*plan, error) {
	specs := r.Specs()
	p := &plan{audio: -1, fixed: make([]*tensor.Tensor, len(specs)), inputN: len(specs)}
	want := ""
	if v, ok := q["input"]; ok {
		want = v[0]
	}
	for i, s := range specs {
		if l.StateInput(i) {
			continue
		}
		if (want == "" && s.DType == tensor.Float32 && p.audio < 0) || (want != "" && s.Name == want) {
			p.audio = i
		}
	}
	if p.audio < 0 {
		if want != "" {
			return nil, fmt.Errorf("input=%s: the model has no input '%s' that takes audio (a float32 input that is no state)", transport.Quote(want), transport.Quote(want))
		}
		return nil, errors.New("the model has no float32 input besides its state to take the audio")
	}
	a := specs[p.audio]
	if a.DType != tensor.Float32 || (len(a.Shape) != 1 && len(a.Shape) != 2) {
		return nil, fmt.Errorf("input '%s' is %s of rank %d: audio goes to a float32 input of shape [n] or [batch, n]", a.Name, a.DType, len(a.Shape))
	}
	p.rank = len(a.Shape)
	for i, s := range specs {
		if i == p.audio || l.StateInput(i) {
			continue
		}
		v, ok := q[s.Name]
		if !ok {
			if s.Required {
				return nil, fmt.Errorf("input '%s' needs a value: add ?%s=VALUE to the URL", s.Name, s.Name)
			}
			continue
		}
		t, err := scalar(s, v[0])
		if err != nil {
			return nil, err
		}
		p.fixed[i] = t
	}
	return p, nil
}

// scalar parses a query value for input s, which must take one element.
func scalar(s tensor.Spec, v string) (*tensor.Tensor, error) {
	shape := make([]int64, len(s.Shape))
	for i, d := range s.Shape {
		if d > 1 {
			return nil, fmt.Errorf("input '%s' has shape %s: only inputs of one element take a value from the URL", s.Name, transport.FormatShape(s.Shape))
		}
		shape[i] = 1
	}
	bad := fmt.Errorf("input '%s' is %s: '%s' is not one", s.Name, s.DType, transport.Quote(v))
	t := &tensor.Tensor{DType: s.DType, Shape: shape}
	switch s.DType {
	case tensor.Int64, tensor.Int32:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (s.DType == tensor.Int32 && (n < math.MinInt32 || n > math.MaxInt32)) {
			return nil, bad
		}
		if s.DType == tensor.Int64 {
			t.Data = []int64{n}
		} else {
			t.Data = []int32{int32(n)}
		}
	case tensor.Float32, tensor.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, bad
		}
		if s.DType == tensor.Float32 {
			t.Data = []float32{float32(f)}
		} else {
			t.Data = []float64{f}
		}
	default:
		return nil, fmt.Errorf("input '%s' is %s: svc takes int32, int64, float32 or float64 values from the URL", s.Name, s.DType)
	}
	return t, nil
}

// inputs makes one step's inputs from a message.
func (p *plan) inputs(kind websocket.MessageType, data []byte) ([]*tensor.Tensor, error) {
	if kind != websocket.MessageBinary {
		return nil, errors.New("text messages are not taken: send each step's audio as a binary message of float32 little-endian samples")
	}
	if len(data) == 0 || len(data)%4 != 0 {
		return nil, fmt.Errorf("a binary message of %d bytes: send float32 little-endian samples, 4 bytes each", len(data))
	}
	samples := make([]float32, len(data)/4)
	for i := range samples {
		samples[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	shape := []int64{int64(len(samples))}
	if p.rank == 2 {
		shape = []int64{1, int64(len(samples))}
	}
	in := make([]*tensor.Tensor, p.inputN)
	copy(in, p.fixed)
	in[p.audio] = &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: samples}
	return in, nil
}
