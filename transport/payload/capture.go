package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/transport"
)

// Content types of a gRPC call's events: the messages as the client sent
// and received them, in protobuf's binary encoding.
const (
	ContentTypeGRPCRequest  = `application/x-protobuf; messageType="inference.ModelInferRequest"`
	ContentTypeGRPCResponse = `application/x-protobuf; messageType="inference.ModelInferResponse"`
)

// modelInfer is the one gRPC method logged.
const modelInfer = "/inference.GRPCInferenceService/ModelInfer"

// RequestIDMetadata carries a gRPC call's request id, both ways: a sane
// x-request-id of the client's is kept, else one is made; the answer's
// header metadata says which.
const RequestIDMetadata = "x-request-id"

// alwaysRedacted are the request headers never logged, whatever
// logger.redact says; hopByHop are those of one connection, not the
// request's.
var (
	alwaysRedacted = []string{"Authorization", "Proxy-Authorization", "Cookie"}
	hopByHop       = []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Expect", "Host", "Content-Length", "Content-Type", "Accept-Encoding",
		// A WebSocket's handshake: its connection's, not its messages'.
		"Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions"}
)

func redactions(listed []string, keyHeader string) map[string]bool {
	m := map[string]bool{}
	for _, h := range append(append(append([]string{}, alwaysRedacted...), hopByHop...), listed...) {
		m[strings.ToLower(h)] = true
	}
	if keyHeader != "" {
		m[strings.ToLower(keyHeader)] = true
	}
	return m
}

// headers returns the headers that may be logged.
func (l *Logger) headers(h map[string][]string) http.Header {
	out := http.Header{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if l.redact[lk] || strings.HasPrefix(lk, "ce-") || strings.HasPrefix(lk, "grpc-") || strings.HasPrefix(lk, ":") {
			continue
		}
		out[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	return out
}

// capture is one request's hold: armed once the request is an inference
// (transport.Inferences.Begin) and sampled, it keeps what was read and
// written.
type capture struct {
	l     *Logger
	w     http.ResponseWriter // the writer the access log gave, with the request id
	r     *http.Request
	mu    sync.Mutex
	armed bool
	over  bool
	in    bytes.Buffer
	out   bytes.Buffer
}

// Inference arms the capture when the request is sampled. When the queue
// is full as the request begins (a receiver down or slow), its events are
// dropped as the queue's without its bodies being kept: a receiver's
// trouble costs the requests no copies of what is then thrown away.
func (c *capture) Inference() {
	if c.l.sampled() {
		full := c.l.full()
		c.mu.Lock()
		c.armed, c.over = true, full
		c.mu.Unlock()
	}
}

// full reports whether the queue has no room for another event.
func (l *Logger) full() bool {
	return len(l.queue) == cap(l.queue) || l.bytes.Load() >= l.o.QueueBytes
}

func (c *capture) keep(b *bytes.Buffer, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed || c.over {
		return
	}
	if int64(b.Len()+len(p)) > c.l.o.QueueBytes {
		// It could never be queued: dropped as the queue's.
		c.over = true
		return
	}
	b.Write(p)
}

type teeBody struct {
	io.ReadCloser
	c *capture
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.c.keep(&t.c.in, p[:n])
	}
	return n, err
}

type teeWriter struct {
	http.ResponseWriter
	c *capture
}

func (t *teeWriter) Write(p []byte) (int, error) {
	n, err := t.ResponseWriter.Write(p)
	if n > 0 {
		t.c.keep(&t.c.out, p[:n])
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// Middleware captures inference requests over HTTP: run inside the access
// log, which gives the request its id (X-Request-ID).
func (l *Logger) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		c := &capture{l: l, w: w, r: r}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &teeBody{ReadCloser: r.Body, c: c}
		}
		next.ServeHTTP(&teeWriter{ResponseWriter: w, c: c}, r.WithContext(transport.WithPayloadTap(r.Context(), c)))
		c.mu.Lock()
		armed, over := c.armed, c.over
		c.mu.Unlock()
		if !armed {
			return
		}
		id := w.Header().Get(transport.RequestIDHeader)
		if over {
			l.drop(ReasonQueueFull, l.events())
			return
		}
		if l.o.Mode != "response" {
			l.Submit(&Event{ID: id, Type: TypeRequest, Source: l.o.Source, Time: arrived,
				ContentType: r.Header.Get("Content-Type"), Header: l.headers(r.Header), Data: c.in.Bytes()})
		}
		if l.o.Mode != "request" {
			l.Submit(&Event{ID: id, Type: TypeResponse, Source: l.o.Source, Time: time.Now(),
				ContentType: w.Header().Get("Content-Type"), Data: c.out.Bytes()})
		}
	})
}

// events is how many events one request makes.
func (l *Logger) events() int {
	if l.o.Mode == "all" {
		return 2
	}
	return 1
}

// Interceptor captures ModelInfer calls over gRPC: the request and
// response messages in protobuf's encoding, or an error as
// {"code", "error"} in JSON.
func (l *Logger) Interceptor(ctx context.Context, req any, method string, next func(context.Context, any) (any, error)) (any, error) {
	if method != modelInfer {
		return next(ctx, req)
	}
	arrived := time.Now()
	md, id := grpcRequestID(ctx)
	c := &capture{l: l}
	resp, err := next(transport.WithPayloadTap(ctx, c), req)
	c.mu.Lock()
	armed, over := c.armed, c.over
	c.mu.Unlock()
	if !armed {
		return resp, err
	}
	if over {
		l.drop(ReasonQueueFull, l.events())
		return resp, err
	}
	if l.o.Mode != "response" {
		if m, ok := req.(proto.Message); ok {
			data, _ := proto.Marshal(m)
			l.Submit(&Event{ID: id, Type: TypeRequest, Source: l.o.Source, Time: arrived,
				ContentType: ContentTypeGRPCRequest, Header: l.headers(md), Data: data})
		}
	}
	if l.o.Mode != "request" {
		e := &Event{ID: id, Type: TypeResponse, Source: l.o.Source, Time: time.Now(), ContentType: ContentTypeGRPCResponse}
		if m, ok := resp.(proto.Message); ok && err == nil {
			e.Data, _ = proto.Marshal(m)
		} else {
			st := status.Convert(err)
			e.ContentType = "application/json"
			e.Data, _ = json.Marshal(map[string]string{"code": st.Code().String(), "error": st.Message()})
		}
		l.Submit(e)
	}
	return resp, err
}

// sampled draws whether an inference request is logged (logger.sample).
func (l *Logger) sampled() bool {
	return l.o.Sample >= 1 || rand.Float64() < l.o.Sample
}

// grpcRequestID is the call's metadata and request id: the client's
// x-request-id when it is sane, else one made; the answer's header
// metadata says which.
func grpcRequestID(ctx context.Context) (metadata.MD, string) {
	md, _ := metadata.FromIncomingContext(ctx)
	var id string
	if v := md.Get(RequestIDMetadata); len(v) > 0 {
		id = v[0]
	}
	id = transport.RequestIDOf(id)
	_ = grpc.SetHeader(ctx, metadata.Pairs(RequestIDMetadata, id))
	return md, id
}

// Payloads is the logger's hooks for the HTTP server and the gRPC server.
func (l *Logger) Payloads() *transport.Payloads {
	return &transport.Payloads{HTTP: l.Middleware, GRPC: l.Interceptor, GRPCStream: l.GRPCStream}
}
