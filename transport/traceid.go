package transport

import (
	"context"
	"encoding/hex"
	"net/http"
)

// TraceID is a W3C trace id, 16 bytes (all zero: none).
type TraceID [16]byte

type traceIDKey struct{}

// WithTraceID returns ctx carrying the trace id of the request's span:
// tracing sets it so that the access log can write it.
func WithTraceID(ctx context.Context, id TraceID) context.Context {
	return context.WithValue(ctx, traceIDKey{}, id)
}

// TraceIDOf is the trace id ctx carries, as 32 lower-case hex digits, or
// "" when none.
func TraceIDOf(ctx context.Context) string {
	id, ok := ctx.Value(traceIDKey{}).(TraceID)
	if !ok || id == (TraceID{}) {
		return ""
	}
	return hex.EncodeToString(id[:])
}

var traceparentKey = http.CanonicalHeaderKey("traceparent")

// requestTraceID is the trace id of r for its access-log line: the one
// tracing put in its context, else the one of a well-formed W3C
// traceparent header (version 00), else "".
func requestTraceID(r *http.Request) string {
	if id := TraceIDOf(r.Context()); id != "" {
		return id
	}
	v := r.Header[traceparentKey]
	if len(v) == 0 {
		return ""
	}
	return TraceparentID(v[0])
}

// TraceparentID is the trace id of a traceparent value
// ("00-<32 hex>-<16 hex>-<2 hex>"), or "" when it is not well formed or
// the id is all zeros.
func TraceparentID(tp string) string {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return ""
	}
	id := tp[3:35]
	zero := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
		zero = zero && c == '0'
	}
	if zero {
		return ""
	}
	return id
}
