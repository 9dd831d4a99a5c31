package payload

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/transport"
)

// ContentTypeGRPCStreamResponse is the content type of a ModelStreamInfer
// response's event (its requests' are ContentTypeGRPCRequest's).
const ContentTypeGRPCStreamResponse = `application/x-protobuf; messageType="inference.ModelStreamInferResponse"`

// modelStreamInfer is the one gRPC streaming method logged.
const modelStreamInfer = "/inference.GRPCInferenceService/ModelStreamInfer"

// MessageID is the event id of a stream's n-th message (from 0) and its
// answer: the stream's request id, a slash, n.
func MessageID(streamID string, n int) string {
	return streamID + "/" + strconv.Itoa(n)
}

// streamLog logs the messages of one stream (transport.PayloadStream).
type streamLog struct {
	l  *Logger
	id string
	// header is the request's that opened the stream (redacted), logged
	// with each message's event.
	header http.Header
}

func noAnswer(string, []byte) {}

// Request logs the stream's n-th message, when it is sampled, and returns
// what logs its answer.
func (s *streamLog) Request(n int, contentType string, data []byte) func(string, []byte) {
	if !s.l.sampled() {
		return noAnswer
	}
	if answer := s.log(n, contentType, func() []byte { return data }); answer != nil {
		return answer
	}
	return noAnswer
}

// log logs the n-th message, whose data is made only when it is logged,
// and returns what logs its answer (nil: answers are not logged).
func (s *streamLog) log(n int, contentType string, data func() []byte) func(string, []byte) {
	l, id := s.l, MessageID(s.id, n)
	if l.o.Mode != "response" {
		l.Submit(&Event{ID: id, Type: TypeRequest, Source: l.o.Source, Time: time.Now(),
			ContentType: contentType, Header: s.header, Data: data()})
	}
	if l.o.Mode == "request" {
		return nil
	}
	return func(contentType string, data []byte) {
		l.Submit(&Event{ID: id, Type: TypeResponse, Source: l.o.Source, Time: time.Now(),
			ContentType: contentType, Data: data})
	}
}

// Stream is the hold on the WebSocket that the request opens: its id is
// the request's (X-Request-ID), its headers are logged with each message.
func (c *capture) Stream() transport.PayloadStream {
	return &streamLog{l: c.l, id: c.w.Header().Get(transport.RequestIDHeader), header: c.l.headers(c.r.Header)}
}

// GRPCStream holds a ModelStreamInfer call (transport.Payloads.GRPCStream):
// its request id is the call's (x-request-id, sent back in the header
// metadata), each request it takes and the response that answers it (in
// order, one each) are logged in protobuf's encoding.
func (l *Logger) GRPCStream(ctx context.Context, method string) transport.GRPCMessages {
	if method != modelStreamInfer {
		return nil
	}
	md, id := grpcRequestID(ctx)
	return &grpcStream{s: streamLog{l: l, id: id, header: l.headers(md)}}
}

// grpcStream pairs a stream's responses with its requests, in order.
type grpcStream struct {
	s        streamLog
	mu       sync.Mutex
	received int // only Received's
	// answers log the answers of the requests taken and not yet answered,
	// oldest first (nil: one not logged).
	answers []func(string, []byte)
}

// Received logs a request as the handler takes it, before the handler
// changes it (a stream's own sequence_id is set on its requests).
func (g *grpcStream) Received(msg any) {
	m, ok := msg.(proto.Message)
	if !ok {
		return
	}
	// Received is called by the one goroutine that takes the requests.
	n := g.received
	g.received++
	var answer func(string, []byte) // nil: not logged
	if g.s.l.sampled() {
		answer = g.s.log(n, ContentTypeGRPCRequest, func() []byte {
			data, _ := proto.Marshal(m)
			return data
		})
	}
	g.mu.Lock()
	g.answers = append(g.answers, answer)
	g.mu.Unlock()
}

// Sent logs a response once it is sent: the answer of the oldest request
// not yet answered.
func (g *grpcStream) Sent(msg any) {
	m, ok := msg.(proto.Message)
	g.mu.Lock()
	if len(g.answers) == 0 {
		g.mu.Unlock()
		return
	}
	answer := g.answers[0]
	g.answers[0] = nil
	g.answers = g.answers[1:]
	g.mu.Unlock()
	if ok && answer != nil {
		data, _ := proto.Marshal(m)
		answer(ContentTypeGRPCStreamResponse, data)
	}
}
