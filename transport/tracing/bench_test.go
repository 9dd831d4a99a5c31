package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// discard is a span exporter that drops what it is given: with it, a
// benchmark measures making the spans and batching them, not their export.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// stepsHandler answers like /predict does, reporting its steps the way the
// protocols and the scheduler report them (decode, a queue wait of zero,
// the run of one row, encode); it does no work of its own.
func stepsHandler() http.Handler {
	out := []byte(`{"probabilities":[[0.8856464,0.09813241,0.01622118]],"label":[0]}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		began := core.TraceStart(ctx)
		_, _ = io.Copy(io.Discard, r.Body)
		core.TraceStep(ctx, core.StepDecode, began, 0)
		if t := core.RequestTraceOf(ctx); t != nil {
			now := time.Now()
			t.Step(core.StepQueue, now, now, 0)
			t.Step(core.StepInfer, now, time.Now(), 1)
		}
		defer core.TraceStep(ctx, core.StepEncode, core.TraceStart(ctx), 0)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// benchWriter is a ResponseWriter that keeps nothing.
type benchWriter struct{ h http.Header }

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(int)             {}

// processCPU is the CPU time the process has used, every thread's (the
// batch span processor's and the exporter's goroutines included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHandler is the cost of tracing per request, in process: the
// server's HTTP handler stack (tracing's middleware first when on, the
// access log, set to off as make bench runs it, the fixed headers) around
// stepsHandler, for a /predict body. cpu-ns/op is the process's CPU time
// per request, the batch span processor's and the exporter's goroutines
// included (ns/op is the loop's own time; the export runs beside it).
//
// Every request carries a caller's traceparent header.
//
//   - off: tracing off, the handler's hooks find no trace.
//   - unsampled: tracing on, the request not sampled (its traceparent's
//     flags say not sampled; the sampler is parentbased_always_on).
//   - request: every request sampled, the server span only
//     (tracing.spans: request), the spans dropped after batching.
//   - steps: every request sampled, the server span and the four step
//     spans (tracing.spans: steps), dropped after batching.
//   - steps-otlp: as steps, exported over OTLP/HTTP to a local receiver
//     that reads and discards each export (its CPU counts too).
func BenchmarkHandler(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	const (
		body = `{"input": [[5.1, 3.5, 1.4, 0.2]]}`
		// Every request comes with a caller's traceparent, sampled or not.
		sampled   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	)
	cases := []struct {
		name        string
		on          bool
		spans       string
		traceparent string
		otlp        bool
	}{
		{name: "off", traceparent: sampled},
		{name: "unsampled", on: true, spans: SpansSteps, traceparent: unsampled},
		{name: "request", on: true, spans: SpansRequest, traceparent: sampled},
		{name: "steps", on: true, spans: SpansSteps, traceparent: sampled},
		{name: "steps-otlp", on: true, spans: SpansSteps, otlp: true, traceparent: sampled},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var mw []transport.Middleware
			if tc.on {
				s := Settings{Enabled: true, Protocol: "http/protobuf", ServiceName: "bench", Spans: tc.spans,
					Sampler: sdktrace.ParentBased(sdktrace.AlwaysSample())}
				var exp sdktrace.SpanExporter = discard{}
				if tc.otlp {
					s.Endpoint = sink.URL
					e, err := exporter(context.Background(), s)
					if err != nil {
						b.Fatal(err)
					}
					exp = e
				}
				t, err := newTracer(context.Background(), s, exp)
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = t.Shutdown(context.Background()) }()
				mw = append(mw, t.Middleware())
			}
			mw = append(mw, transport.AccessLog(zap.NewNop(), nil, config.AccessLog{Mode: config.AccessLogOff}), transport.Headers(nil))
			h := transport.Chain(stepsHandler(), mw...)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				r, _ := http.NewRequest(http.MethodPost, "/predict", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Traceparent", tc.traceparent)
				clear(w.h)
				h.ServeHTTP(w, r)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
