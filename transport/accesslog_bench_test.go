package transport

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	svclog "github.com/svc-dev/svc/transport/log"
)

// benchWriter is a ResponseWriter that keeps nothing, so that the benchmark
// measures the middleware rather than a recorder.
type benchWriter struct{ h http.Header }

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(int)             {}

// BenchmarkAccessLog is the middleware around a handler that writes a
// short 200, in each mode, with svc's JSON core writing through a LogWriter to io.Discard, as 'svc serve' does.
func BenchmarkAccessLog(b *testing.B) {
	for _, mode := range []string{"all", "errors", "sampled", "off"} {
		b.Run(mode, func(b *testing.B) {
			out := svclog.NewWriter(io.Discard, 0)
			defer func() { _ = out.Close(context.Background()) }()
			log := zap.New(svclog.NewJSONCore(out, zapcore.InfoLevel))
			body := []byte(`{"outputs":{"y":[1]}}`)
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(body)
			}), AccessLog(log, nil, mustPolicy(b, mode)))
			r := httptest.NewRequest(http.MethodPost, "/predict", nil)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
