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

// accessLog assigns the request id, recovers from panics in handlers and
// writes one log line per request.
func accessLog(log *zap.Logger, extra func(http.ResponseWriter)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get(RequestIDHeader)
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header().Set(RequestIDHeader, id)
			if extra != nil {
				extra(w)
			}
			rec := &statusRecorder{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.Error("handler panic", zap.String("request_id", id), zap.Any("panic", p), zap.Stack("stack"))
					if rec.status == 0 {
						writeError(rec, http.StatusInternalServerError, "Internal server error")
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
