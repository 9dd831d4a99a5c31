package transport

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-ID"

// statusRecorder remembers the status and size written.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// validRequestID accepts client ids that are safe to log and echo.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Middleware wraps a handler.
type Middleware func(http.Handler) http.Handler

// Chain applies middleware so that the first one listed runs first.
func Chain(h http.Handler, mw ...Middleware) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// Headers sets fixed response headers (such as X-Worker-Id) on every
// response.
func Headers(headers map[string]string) Middleware {
	return func(next http.Handler) http.Handler {
		if len(headers) == 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range headers {
				w.Header().Set(k, v)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// AccessLog assigns the request id (echoing a sane X-Request-ID), recovers
// from panics in handlers (a 500 written by errs) and writes one log line
// per request.
func AccessLog(log *zap.Logger, errs ErrorWriter) Middleware {
	if errs == nil {
		errs = PlainErrors
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get(RequestIDHeader)
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header().Set(RequestIDHeader, id)
			rec := &statusRecorder{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.Error("handler panic", zap.String("request_id", id), zap.Any("panic", p), zap.Stack("stack"))
					if rec.status == 0 {
						errs(rec, http.StatusInternalServerError, "Internal server error")
					}
				}
				log.Info("request",
					zap.String("method", r.Method),
					zap.String("path", sanitizePath(r.URL.Path)),
					zap.Int("status", rec.status),
					zap.Duration("duration", time.Since(start)),
					zap.Int("bytes", rec.bytes),
					zap.String("request_id", id),
					zap.String("remote", r.RemoteAddr),
				)
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

func sanitizePath(p string) string {
	if len(p) > 256 {
		p = p[:256] + "..."
	}
	return strings.ToValidUTF8(p, "?")
}
