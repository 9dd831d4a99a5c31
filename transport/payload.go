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

// Payloads is the optional payload logger (transport/payload, models.NAME.logger):
// the HTTP middleware that captures what inference requests carry, run inside
// the access log so that it sees the request id, and the gRPC unary
// interceptor that does the same for ModelInfer.
type Payloads struct {
	HTTP Middleware
	// GRPC wraps a unary call: method is its full name, next runs it.
	GRPC func(ctx context.Context, req any, method string, next func(context.Context, any) (any, error)) (any, error)
}

// RequestIDOf returns id when it is a request id safe to log and echo, or
// a new one: the rule of the X-Request-ID header, for other protocols.
func RequestIDOf(id string) string {
	if validRequestID(id) {
		return id
	}
	return newRequestID()
}
