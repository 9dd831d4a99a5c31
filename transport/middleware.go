package transport

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/svc-dev/svc/core/config"
	svclog "github.com/svc-dev/svc/transport/log"
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

// requestIDKey is RequestIDHeader in canonical form: looking it up and
// setting it directly spares canonicalizing the name on every request.
var requestIDKey = http.CanonicalHeaderKey(RequestIDHeader)

// newRequestID is 96 random bits in hex. The bits come from math/rand/v2's
// global source (ChaCha8, seeded by the operating system for each process,
// so workers do not repeat each other), which costs a fraction of a
// crypto/rand read per request; a request id is a label, not a secret.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], mrand.Uint32())
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

// accessFields holds the fields of one access-log line, reused so that a
// line costs no allocation for its field list.
var accessFields = sync.Pool{New: func() any { return new([8]zap.Field) }}

// AccessLog assigns the request id (echoing a sane X-Request-ID), recovers
// from panics in handlers (a 500 written by errs, always logged) and writes
// one log line per request that policy selects: every request, those
// answered with a status of 400 or more, those plus a random sample of the
// rest, or none. A line carries the request's trace id (trace_id) when
// tracing gave it a span or a W3C traceparent header came with it.
func AccessLog(log *zap.Logger, errs ErrorWriter, policy config.AccessLog) Middleware {
	if errs == nil {
		errs = PlainErrors
	}
	logs := policy.Mode != config.AccessLogOff
	lines := newAccessLogger(log)
	// Sampled: a successful request is logged when a random uint64 falls
	// below threshold.
	var threshold uint64
	if policy.Mode == config.AccessLogSampled {
		threshold = math.MaxUint64
		if policy.Rate < 1 {
			threshold = uint64(policy.Rate * (1 << 64))
		}
	}
	wants := func(status int) bool {
		switch policy.Mode {
		case config.AccessLogErrors:
			return status >= 400
		case config.AccessLogSampled:
			return status >= 400 || mrand.Uint64() < threshold
		case config.AccessLogOff:
			return false
		}
		return true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var start time.Time
			if logs {
				start = time.Now()
			}
			var id string
			if v := r.Header[requestIDKey]; len(v) > 0 {
				id = v[0]
			}
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header()[requestIDKey] = []string{id}
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
				status := rec.status
				if status == 0 {
					status = http.StatusOK // what net/http sends for a handler that wrote nothing
				}
				if !wants(status) {
					return
				}
				lines.write(r, status, rec.bytes, start, id)
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// accessLogger writes access-log lines to a logger's core.
type accessLogger struct {
	core zapcore.Core
	name string
	// fast is svc's own JSON core, which formats access lines itself (see
	// log.NewJSONCore); nil for other cores and for a named logger, whose
	// lines carry a "logger" key it does not write.
	fast *svclog.JSONCore
}

func newAccessLogger(log *zap.Logger) accessLogger {
	a := accessLogger{core: log.Core(), name: log.Name()}
	if fast, ok := a.core.(*svclog.JSONCore); ok && a.name == "" {
		a.fast = fast
	}
	return a
}

// write writes one request's line, straight to the logger's core: the
// logger's Check would read the clock again and take a checked entry from
// a pool. (make bench's profile breakdown looks this function up.)
func (a accessLogger) write(r *http.Request, status, bytes int, start time.Time, id string) {
	if !a.core.Enabled(zapcore.InfoLevel) {
		return
	}
	end := time.Now()
	if a.fast != nil {
		line := accessLineOf(r, status, bytes, start, end, id)
		a.fast.WriteAccess(&line)
		return
	}
	zapAccessLine(a.core, a.name, r, status, bytes, start, end, id)
}

// accessLineOf is what the access log says of a request.
func accessLineOf(r *http.Request, status, bytes int, start, end time.Time, id string) svclog.AccessLine {
	return svclog.AccessLine{End: end, Method: r.Method, Path: sanitizePath(r.URL.Path), Status: status,
		Duration: end.Sub(start), Size: bytes, ID: id, Remote: r.RemoteAddr, Trace: requestTraceID(r)}
}

// zapAccessLine writes an access-log line through zap's encoder.
func zapAccessLine(core zapcore.Core, name string, r *http.Request, status, bytes int, start, end time.Time, id string) {
	f := accessFields.Get().(*[8]zap.Field)
	f[0] = zap.String("method", r.Method)
	f[1] = zap.String("path", sanitizePath(r.URL.Path))
	f[2] = zap.Int("status", status)
	f[3] = zap.Duration("duration", end.Sub(start))
	f[4] = zap.Int("bytes", bytes)
	f[5] = zap.String("request_id", id)
	f[6] = zap.String("remote", r.RemoteAddr)
	n := 7
	if tid := requestTraceID(r); tid != "" {
		f[7] = zap.String("trace_id", tid)
		n++
	}
	// A LogWriter never fails; another destination's error has nowhere
	// better to go than the log that failed.
	_ = core.Write(zapcore.Entry{Level: zapcore.InfoLevel, Time: end, LoggerName: name, Message: "request"}, f[:n])
	*f = [8]zap.Field{}
	accessFields.Put(f)
}

func sanitizePath(p string) string {
	if len(p) > 256 {
		p = p[:256] + "..."
	}
	return strings.ToValidUTF8(p, "?")
}
