// Package seqroute runs each sequence's steps in the worker that holds its
// state, under --workers: the sequence's id picks its worker (FNV-1a,
// modulo the workers), and a worker that gets a step of another's sequence
// forwards it over that worker's private socket in the supervisor's socket
// directory. A worker that died and was replaced lost its sequences: their
// steps get an error that says so, never a silently reset state.
package seqroute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
)

// SocketPath is worker id's socket in dir.
func SocketPath(dir string, id int) string {
	return filepath.Join(dir, "seq-"+strconv.Itoa(id)+".sock")
}

// Router is a seq.Router over the workers' sockets.
type Router struct {
	dir         string
	self, count int
	client      *http.Client
}

var _ seq.Router = (*Router)(nil)

// New routes the sequences of count workers, this being worker self, over
// sockets in dir.
func New(dir string, self, count int) *Router {
	r := &Router{dir: dir, self: self, count: count}
	r.client = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			id, err := strconv.Atoi(host)
			if err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, "unix", SocketPath(dir, id))
		},
		MaxIdleConnsPerHost: 64,
	}}
	return r
}

// Owner is the worker that holds sequence id.
func (r *Router) Owner(id string) (int, bool) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	peer := int(h.Sum32()%uint32(r.count)) + 1
	return peer, peer == r.self
}

// wireTensor is a tensor on the socket.
type wireTensor struct {
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Raw   []byte  `json:"raw"`
}

func toWire(ts []*tensor.Tensor) []*wireTensor {
	out := make([]*wireTensor, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = &wireTensor{DType: t.DType.String(), Shape: t.Shape, Raw: tensor.RawView(t)}
		}
	}
	return out
}

func fromWire(ws []*wireTensor) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(ws))
	for i, w := range ws {
		if w == nil {
			continue
		}
		dt, ok := tensor.ParseDType(w.DType)
		if !ok {
			return nil, fmt.Errorf("tensor %d: unknown type %q", i, w.DType)
		}
		n := int64(1)
		for _, d := range w.Shape {
			n *= d
		}
		data, err := tensor.DecodeRaw(dt, n, w.Raw, 0)
		if err != nil {
			return nil, err
		}
		out[i] = &tensor.Tensor{DType: dt, Shape: w.Shape, Data: data}
	}
	return out, nil
}

type stepRequest struct {
	ID     string        `json:"id"`
	Start  bool          `json:"start"`
	End    bool          `json:"end"`
	Inputs []*wireTensor `json:"inputs"`
}

type endRequest struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// wireError is a refusal of the owner's store, typed again on arrival.
type wireError struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Input   string `json:"input,omitempty"`
	Max     int    `json:"max,omitempty"`
	Message string `json:"message"`
}

type stepAnswer struct {
	Outputs []*wireTensor `json:"outputs,omitempty"`
	Error   *wireError    `json:"error,omitempty"`
}

func encodeError(err error) *wireError {
	var (
		unknown *seq.UnknownError
		limit   *seq.LimitError
		bad     *seq.StepError
		closed  *seq.ClosedError
		input   *core.InputError
		timeout *core.TimeoutError
	)
	switch {
	case errors.As(err, &input):
		return &wireError{Kind: "input", Input: input.Input, Message: input.Message}
	case errors.As(err, &timeout):
		return &wireError{Kind: "timeout", Message: timeout.After.String()}
	case errors.As(err, &unknown):
		return &wireError{Kind: "unknown", ID: unknown.ID, Reason: unknown.Reason, Message: err.Error()}
	case errors.As(err, &limit):
		return &wireError{Kind: "limit", ID: limit.ID, Max: limit.Max, Message: err.Error()}
	case errors.As(err, &bad):
		return &wireError{Kind: "step", Input: bad.Input, Message: bad.Message}
	case errors.As(err, &closed):
		return &wireError{Kind: "closed", Reason: closed.Reason, Message: err.Error()}
	case errors.Is(err, seq.ErrStateless):
		return &wireError{Kind: "stateless", Message: err.Error()}
	}
	return &wireError{Kind: "run", Message: err.Error()}
}

func (w *wireError) decode() error {
	switch w.Kind {
	case "unknown":
		return &seq.UnknownError{ID: w.ID, Reason: w.Reason}
	case "limit":
		return &seq.LimitError{ID: w.ID, Max: w.Max}
	case "step":
		return &seq.StepError{Input: w.Input, Message: w.Message}
	case "closed":
		return &seq.ClosedError{Reason: w.Reason}
	case "stateless":
		return seq.ErrStateless
	case "input":
		return &core.InputError{Input: w.Input, Message: w.Message}
	case "timeout":
		after, _ := time.ParseDuration(w.Message)
		return &core.TimeoutError{After: after}
	}
	return &core.InferenceError{Err: errors.New(strings.TrimPrefix(w.Message, "Inference failed: "))}
}

// Forward runs st in worker peer.
func (r *Router) Forward(ctx context.Context, peer int, st seq.Step) ([]*tensor.Tensor, error) {
	var ans stepAnswer
	if err := r.post(ctx, peer, "/step", stepRequest{ID: st.ID, Start: st.Start, End: st.End, Inputs: toWire(st.Inputs)}, &ans); err != nil {
		if ctx.Err() != nil {
			// The request ended (its deadline, its client gone), not the
			// worker: the sequence lives on there.
			return nil, core.Canceled(ctx)
		}
		if st.Start {
			return nil, &seq.ClosedError{Reason: fmt.Sprintf("worker %d, which holds the sequences of id '%s', is not answering (restarting?); start the sequence again shortly", peer, st.ID)}
		}
		return nil, &seq.UnknownError{ID: st.ID, Reason: fmt.Sprintf("it lived in worker %d, which is not answering: the worker died, and the sequence's state with it", peer)}
	}
	if ans.Error != nil {
		return nil, ans.Error.decode()
	}
	return fromWire(ans.Outputs)
}

// ForwardEnd ends sequence id in worker peer.
func (r *Router) ForwardEnd(ctx context.Context, peer int, id, reason string) error {
	return r.post(ctx, peer, "/end", endRequest{ID: id, Reason: reason}, &struct{}{})
}

func (r *Router) post(ctx context.Context, peer int, path string, body, into any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+strconv.Itoa(peer)+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("worker %d answered %s", peer, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// Server answers the other workers' steps on this worker's socket.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve answers, on worker self's socket in dir, the steps the other
// workers forward, with store.
func Serve(dir string, self int, store *seq.Store) (*Server, error) {
	path := SocketPath(dir, self)
	_ = os.Remove(path) // a dead predecessor's
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sequence socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /step", func(w http.ResponseWriter, r *http.Request) {
		var req stepRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<30)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var ans stepAnswer
		inputs, err := fromWire(req.Inputs)
		if err == nil {
			var outs []*tensor.Tensor
			outs, err = store.StepHere(r.Context(), seq.Step{ID: req.ID, Start: req.Start, End: req.End, Inputs: inputs})
			ans.Outputs = toWire(outs)
		}
		if err != nil {
			ans.Error = encodeError(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ans)
	})
	mux.HandleFunc("POST /end", func(w http.ResponseWriter, r *http.Request) {
		var req endRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		store.EndHere(req.ID, req.Reason)
		_, _ = w.Write([]byte("{}"))
	})
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops answering, once the steps under way are answered (or ctx
// ends).
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
