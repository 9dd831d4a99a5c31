package transport

import (
	"context"
)

// PayloadTap is the payload logger's hold on one request (transport/payload),
// carried by its context: Begin tells it that the request is an inference,
// so that its request and response are logged. Requests that are not
// inferences (health, metadata, metrics) never call Begin and are not logged.
type PayloadTap interface{ Inference() }

type payloadTapKey struct{}

// WithPayloadTap returns ctx carrying t.
func WithPayloadTap(ctx context.Context, t PayloadTap) context.Context {
	return context.WithValue(ctx, payloadTapKey{}, t)
}

// payloadTap marks the request of ctx as an inference for the payload
// logger, when it has one.
func payloadTap(ctx context.Context) {
	if t, ok := ctx.Value(payloadTapKey{}).(PayloadTap); ok {
		t.Inference()
	}
}

// PayloadStream is the payload logger's hold on one stream: a WebSocket
// connection's steps, a gRPC stream's requests. Each message a client
// sends on it and its answer are logged as one inference request's pair
// of events.
type PayloadStream interface {
	// Request logs the stream's n-th message (from 0), as it came, with its
	// content type, and returns what logs its answer; both do nothing when
	// the message is not sampled.
	Request(n int, contentType string, data []byte) (answer func(contentType string, data []byte))
}

// payloadStreamTap is a PayloadTap that holds a stream: the payload
// logger's capture of a request that may be upgraded to a WebSocket.
type payloadStreamTap interface{ Stream() PayloadStream }

// PayloadStreamOf returns the payload logger's hold on the stream that
// the request of ctx opens, or nil when there is no logger.
func PayloadStreamOf(ctx context.Context) PayloadStream {
	if t, ok := ctx.Value(payloadTapKey{}).(payloadStreamTap); ok {
		return t.Stream()
	}
	return nil
}

// GRPCMessages logs the messages of one gRPC stream as they go: Received
// each request the handler takes, Sent each response it sends.
type GRPCMessages interface {
	Received(msg any)
	Sent(msg any)
}

// Payloads is the optional payload logger (transport/payload, models.NAME.logger):
// the HTTP middleware that captures what inference requests carry, run inside
// the access log so that it sees the request id (and whose hold on a
// request that opens a WebSocket logs the stream's steps, PayloadStreamOf),
// the gRPC unary interceptor that does the same for ModelInfer, and the
// hold on a gRPC stream that does it for each of ModelStreamInfer's
// requests.
type Payloads struct {
	HTTP Middleware
	// GRPC wraps a unary call: method is its full name, next runs it.
	GRPC func(ctx context.Context, req any, method string, next func(context.Context, any) (any, error)) (any, error)
	// GRPCStream holds a streaming call of method, on ctx (the stream's):
	// nil when the method's messages are not logged.
	GRPCStream func(ctx context.Context, method string) GRPCMessages
}

// RequestIDOf returns id when it is a request id safe to log and echo, or
// a new one: the rule of the X-Request-ID header, for other protocols.
func RequestIDOf(id string) string {
	if validRequestID(id) {
		return id
	}
	return newRequestID()
}
