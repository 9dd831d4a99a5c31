package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svc-dev/svc/core/tensor"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/rest"
)

// Protocol is the API svc bench sends its requests through. Each has a
// loader (newLoader).
type Protocol string

// Protocols.
const (
	// ProtocolV1 posts JSON bodies to /predict (the default).
	ProtocolV1 Protocol = "v1"
	// ProtocolV2JSON posts Open Inference Protocol v2 requests with JSON
	// tensors to /v2/models/{name}/infer, and gets JSON tensors back.
	ProtocolV2JSON Protocol = "v2-json"
	// ProtocolV2Binary posts v2 requests with every input as binary data
	// (the binary tensor extension) and asks for every output as binary
	// data.
	ProtocolV2Binary Protocol = "v2-binary"
	// ProtocolGRPC calls the Open Inference Protocol's gRPC ModelInfer
	// with every input in raw_input_contents (so the outputs come back
	// raw), one HTTP/2 connection per load-generator worker.
	ProtocolGRPC Protocol = "grpc"
)

// Protocols lists the protocols svc bench speaks.
func Protocols() []Protocol {
	return []Protocol{ProtocolV1, ProtocolV2JSON, ProtocolV2Binary, ProtocolGRPC}
}

// ParseProtocol parses a --protocol value ("" is ProtocolV1).
func ParseProtocol(s string) (Protocol, error) {
	if s == "" {
		return ProtocolV1, nil
	}
	p := Protocol(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(Protocols(), p) {
		names := make([]string, 0, len(Protocols()))
		for _, q := range Protocols() {
			names = append(names, string(q))
		}
		return "", fmt.Errorf("--protocol %q: want one of %s", s, strings.Join(names, ", "))
	}
	return p, nil
}

// v2 reports whether p is a v2 protocol over HTTP.
func (p Protocol) v2() bool { return p == ProtocolV2JSON || p == ProtocolV2Binary }

// v1 reports whether p posts /predict bodies.
func (p Protocol) v1() bool { return p == ProtocolV1 || p == "" }

// requests are the pre-encoded requests of a run: the v1 bodies (always:
// the in-process modes decode them) and, for a v2 protocol, the same
// inputs as v2 bodies.
type requests struct {
	model string
	v1    [][]byte
	// contentType is the v1 bodies' media type ("": application/json).
	contentType string
	v2          []v2Body
	// grpc holds the same inputs as gRPC requests, for ProtocolGRPC;
	// grpcAddr is the server's gRPC address (host:port).
	grpc     []*inference.ModelInferRequest
	grpcAddr string
}

// encodeGRPC builds each set of input tensors (named after plan) as a
// ModelInferRequest with raw contents.
func encodeGRPC(model string, plan []Planned, tensors [][]*tensor.Tensor) []*inference.ModelInferRequest {
	out := make([]*inference.ModelInferRequest, len(tensors))
	for i, ts := range tensors {
		in := make([]grpcapi.Input, len(ts))
		for j, t := range ts {
			in[j] = grpcapi.Input{Name: plan[j].Name, Tensor: t}
		}
		out[i] = grpcapi.RawRequest(model, in...)
	}
	return out
}

// v2Body is an encoded v2 inference request.
type v2Body struct {
	body []byte
	// headerLen is the JSON part's length (-1: all JSON).
	headerLen int
}

// encodeV2 encodes each set of input tensors (named after plan) as a v2
// request; binary sends inputs and asks for outputs as binary data.
func encodeV2(plan []Planned, tensors [][]*tensor.Tensor, binary bool) ([]v2Body, error) {
	out := make([]v2Body, len(tensors))
	for i, ts := range tensors {
		req := &oip.InferRequest{BinaryOutput: binary}
		for j, t := range ts {
			req.Inputs = append(req.Inputs, oip.InferInput{Name: plan[j].Name, Tensor: t, Binary: binary})
		}
		body, hl, err := oip.EncodeInfer(req)
		if err != nil {
			return nil, fmt.Errorf("encode a v2 request: %w", err)
		}
		out[i] = v2Body{body: body, headerLen: hl}
	}
	return out, nil
}

// loader sends one protocol's requests for a level's workers, each on its
// own connection.
type loader interface {
	// op sends request seq of worker w and reads the whole answer.
	op() Op
	// close releases the connections.
	close()
}

// newLoader returns the loader of p for workers load-generator workers,
// each with its own connection.
func newLoader(p Protocol, base string, workers int, timeout time.Duration, reqs *requests) (loader, error) {
	if p == ProtocolGRPC {
		return newGRPCLoader(workers, reqs)
	}
	if strings.HasPrefix(base, "http://") {
		switch {
		case p.v1():
			ct := reqs.contentType
			if ct == "" {
				ct = "application/json"
			}
			h := http.Header{"Content-Type": {ct}}
			return newConnLoader(base, rest.PathPredict, reqs.v1, func(int) http.Header { return h }, workers, timeout)
		case p.v2() && len(reqs.v2) > 0:
			bodies := make([][]byte, len(reqs.v2))
			for k, b := range reqs.v2 {
				bodies[k] = b.body
			}
			return newConnLoader(base, oip.InferPath(reqs.model, ""), bodies, func(k int) http.Header {
				return oip.RequestHeader(reqs.v2[k].headerLen)
			}, workers, timeout)
		}
	}
	clients := make([]*http.Client, workers)
	for i := range clients {
		clients[i] = newClient(timeout)
	}
	return loaderWith(p, base, clients, reqs)
}

// loaderWith is the loader of p over the given clients, one per worker.
func loaderWith(p Protocol, base string, clients []*http.Client, reqs *requests) (loader, error) {
	switch p {
	case ProtocolV1, "":
		if reqs.contentType != "" {
			return &httpLoader{clients: clients, send: rawPredictOp(base, reqs.v1, reqs.contentType, clients)}, nil
		}
		return &httpLoader{clients: clients, send: predictOp(base, reqs.v1, clients)}, nil
	case ProtocolV2JSON, ProtocolV2Binary:
		if len(reqs.v2) == 0 {
			return nil, errors.New("no v2 requests encoded")
		}
		return &httpLoader{clients: clients, send: inferOp(base, reqs.model, reqs.v2, clients)}, nil
	}
	return nil, fmt.Errorf("protocol %q has no loader", p)
}

// httpLoader is a loader over HTTP/1.1 keep-alive connections.
type httpLoader struct {
	clients []*http.Client
	send    Op
}

func (l *httpLoader) op() Op { return l.send }

func (l *httpLoader) close() {
	for _, c := range l.clients {
		c.CloseIdleConnections()
	}
}

// inferOp posts v2 bodies to the model's infer path, rotating through
// them; worker w uses clients[w]. A non-200 answer is an error carrying
// the start of its message.
func inferOp(base, model string, bodies []v2Body, clients []*http.Client) Op {
	oc := make([]*oip.Client, len(clients))
	for i, c := range clients {
		oc[i] = oip.NewClient(base, c)
	}
	path := oip.InferPath(model, "")
	return func(ctx context.Context, w int, seq int64) (int, error) {
		b := bodies[(int64(w)+seq)%int64(len(bodies))]
		resp, err := oc[w].Post(ctx, path, b.body, b.headerLen)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, clip(string(msg), 300))
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return resp.StatusCode, fmt.Errorf("read the answer of %s: %w", path, err)
		}
		return resp.StatusCode, nil
	}
}

// grpcLoader is a loader over one gRPC connection per worker.
type grpcLoader struct {
	clients []*grpcapi.Client
	send    Op
}

// newGRPCLoader connects workers clients to reqs.grpcAddr; each worker
// rotates through the requests.
func newGRPCLoader(workers int, reqs *requests) (*grpcLoader, error) {
	if len(reqs.grpc) == 0 || reqs.grpcAddr == "" {
		return nil, errors.New("no gRPC requests or address")
	}
	l := &grpcLoader{clients: make([]*grpcapi.Client, 0, workers)}
	for range workers {
		c, err := grpcapi.NewClient(reqs.grpcAddr)
		if err != nil {
			l.close()
			return nil, err
		}
		l.clients = append(l.clients, c)
	}
	l.send = func(ctx context.Context, w int, seq int64) (int, error) {
		req := reqs.grpc[(int64(w)+seq)%int64(len(reqs.grpc))]
		resp, err := l.clients[w].Infer(ctx, req)
		if err != nil {
			return 0, fmt.Errorf("ModelInfer: %s", clip(err.Error(), 300))
		}
		if len(resp.GetOutputs()) == 0 {
			return 0, errors.New("ModelInfer: an answer without outputs")
		}
		return http.StatusOK, nil
	}
	return l, nil
}

func (l *grpcLoader) op() Op { return l.send }

func (l *grpcLoader) close() {
	for _, c := range l.clients {
		_ = c.Close()
	}
}

// probeAll sends every request once through p on client and fails on any
// answer but 200, with a hint on how to fix the input.
func probeAll(ctx context.Context, p Protocol, base string, client *http.Client, reqs *requests) error {
	var ld loader
	var err error
	if p == ProtocolGRPC {
		ld, err = newGRPCLoader(1, reqs)
	} else {
		ld, err = loaderWith(p, base, []*http.Client{client}, reqs)
	}
	if err != nil {
		return err
	}
	defer ld.close()
	n := len(reqs.v1)
	switch {
	case p.v2():
		n = len(reqs.v2)
	case p == ProtocolGRPC:
		n = len(reqs.grpc)
	}
	op := ld.op()
	for seq := range int64(n) {
		status, err := op(ctx, 0, seq)
		if err == nil {
			continue
		}
		if p == ProtocolGRPC {
			// Not only a refused request: an address nobody serves gRPC on
			// fails here too.
			return fmt.Errorf("gRPC ModelInfer at %s failed (is svc serving gRPC there? svc serve --grpc-port): %w", reqs.grpcAddr, err)
		}
		hint := ""
		if status >= 400 && status < 600 {
			hint = "; set the input shapes with --shape NAME=D0,D1,… and --batch, or give a request body with --input FILE.json"
		}
		what := "POST " + rest.PathPredict
		if p.v2() {
			what = "POST " + oip.InferPath(reqs.model, "")
		}
		return fmt.Errorf("the server does not accept the request body: %s: %w%s", what, err, hint)
	}
	return nil
}
