package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// seen is what the handler behind the middleware found in its request's
// context.
type seen struct {
	traceID string
	steps   bool
}

// inferHandler answers with status after reporting the four steps of an
// inference of two rows, and records what its context carried.
func inferHandler(status int, got *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		got.traceID = transport.TraceIDOf(ctx)
		got.steps = core.RequestTraceOf(ctx) != nil
		began := core.TraceStart(ctx)
		core.TraceStep(ctx, core.StepDecode, began, 0)
		if t := core.RequestTraceOf(ctx); t != nil {
			now := time.Now()
			t.Step(core.StepQueue, now, now, 0)
			t.Step(core.StepInfer, now, now.Add(time.Millisecond), 2)
		}
		core.TraceStep(ctx, core.StepEncode, core.TraceStart(ctx), 0)
		w.WriteHeader(status)
	})
}

func attrOf(attrs []attribute.KeyValue, key string) string {
	for _, kv := range attrs {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// TestMiddleware: the HTTP server span, its attributes (those the semantic
// conventions require, and svc.batch_size), its parent from a traceparent
// header, the step spans under it by tracing.spans, an error status for a
// 5xx, the trace id in the access log, and, for an unsampled request,
// nothing exported and nothing added to the request, whose access-log line
// still has the caller's trace id.
func TestMiddleware(t *testing.T) {
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cases := []struct {
		name        string
		spans       string
		traceparent string
		status      int
		exported    []string // span names, in the order they end
		parent      bool     // the server span's parent is the client's
		wantSteps   bool     // the handler's context holds a RequestTrace
	}{
		{name: "steps", spans: SpansSteps, traceparent: "00-" + clientTrace + "-" + clientSpan + "-01", status: 200,
			exported: []string{"decode", "queue", "inference", "encode", "POST /predict"}, parent: true, wantSteps: true},
		{name: "request", spans: SpansRequest, traceparent: "00-" + clientTrace + "-" + clientSpan + "-01", status: 200,
			exported: []string{"POST /predict"}, parent: true, wantSteps: true},
		{name: "new trace", spans: SpansSteps, status: 200,
			exported: []string{"decode", "queue", "inference", "encode", "POST /predict"}, wantSteps: true},
		{name: "server error", spans: SpansRequest, status: 503, exported: []string{"POST /predict"}, wantSteps: true},
		{name: "unsampled", spans: SpansSteps, traceparent: "00-" + clientTrace + "-" + clientSpan + "-00", status: 200},
		{name: "malformed traceparent", spans: SpansSteps, traceparent: "00-xyz-" + clientSpan + "-01", status: 200,
			exported: []string{"decode", "queue", "inference", "encode", "POST /predict"}, wantSteps: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tr, err := newTracer(context.Background(), Settings{Enabled: true, ServiceName: "test", Spans: tc.spans,
				Sampler: sdktrace.ParentBased(sdktrace.AlwaysSample())}, exp)
			if err != nil {
				t.Fatal(err)
			}
			var got seen
			obs, logs := observer.New(zap.InfoLevel)
			h := transport.Chain(inferHandler(tc.status, &got), tr.Middleware(),
				transport.AccessLog(zap.New(obs), nil, config.AccessLog{Mode: config.AccessLogAll}))
			r := httptest.NewRequest(http.MethodPost, "http://svc.test:8080/predict", strings.NewReader(`{}`))
			r.RemoteAddr = "10.1.2.3:4567"
			r.Header.Set("User-Agent", "client/1")
			if tc.traceparent != "" {
				r.Header.Set("traceparent", tc.traceparent)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			// ForceFlush exports every span ended (the in-memory exporter
			// forgets its spans on Shutdown).
			if err := tr.provider.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.exported, ",") {
				t.Fatalf("exported %q, want %q", names, tc.exported)
			}
			if got.steps != tc.wantSteps {
				t.Errorf("the handler's context has a RequestTrace: %v, want %v", got.steps, tc.wantSteps)
			}
			lines := logs.FilterMessage("request").All()
			if len(lines) != 1 {
				t.Fatalf("%d access-log lines", len(lines))
			}
			logged := lines[0].ContextMap()["trace_id"]
			if tc.name == "unsampled" {
				// The request went on untouched; its line has the
				// caller's trace id, from the header.
				if got.traceID != "" || logged != clientTrace {
					t.Errorf("context's trace id %q, access log's %v; want none and the client's %q", got.traceID, logged, clientTrace)
				}
				return
			}
			server := spans[len(spans)-1]
			if id := server.SpanContext.TraceID().String(); got.traceID != id || logged != id {
				t.Errorf("context's trace id %q, access log's %v; want the span's %s", got.traceID, logged, id)
			}
			if server.SpanKind != trace.SpanKindServer {
				t.Errorf("server span's kind %v", server.SpanKind)
			}
			if tc.parent != (server.Parent.SpanID().String() == clientSpan) || tc.parent != (server.SpanContext.TraceID().String() == clientTrace) {
				t.Errorf("server span's parent %v in trace %v; continues the client's: %v", server.Parent.SpanID(), server.SpanContext.TraceID(), tc.parent)
			}
			want := map[string]string{
				"http.request.method": "POST", "url.scheme": "http", "url.path": "/predict",
				"http.response.status_code": strconv.Itoa(tc.status),
			}
			if tc.spans == SpansRequest {
				want[BatchSizeKey] = "2"
			}
			for k, v := range want {
				if g := attrOf(server.Attributes, k); g != v {
					t.Errorf("server span's %s = %q, want %q", k, g, v)
				}
			}
			if tc.spans == SpansSteps && attrOf(server.Attributes, BatchSizeKey) != "" {
				t.Errorf("server span has %s with step spans on", BatchSizeKey)
			}
			if tc.status >= 500 {
				if server.Status.Code != codes.Error || attrOf(server.Attributes, "error.type") != strconv.Itoa(tc.status) {
					t.Errorf("a %d: status %v, error.type %q", tc.status, server.Status, attrOf(server.Attributes, "error.type"))
				}
			} else if server.Status.Code != codes.Unset {
				t.Errorf("a %d: status %v", tc.status, server.Status)
			}
			for _, s := range spans[:len(spans)-1] {
				if s.Parent.SpanID() != server.SpanContext.SpanID() || s.SpanKind != trace.SpanKindInternal {
					t.Errorf("%s span: parent %v kind %v, want the server span %v, internal", s.Name, s.Parent.SpanID(), s.SpanKind, server.SpanContext.SpanID())
				}
				if s.Name == "inference" && attrOf(s.Attributes, BatchSizeKey) != "2" {
					t.Errorf("inference span's %s = %q, want 2", BatchSizeKey, attrOf(s.Attributes, BatchSizeKey))
				}
				if s.Name == "queue" && !s.EndTime.Equal(s.StartTime) {
					t.Errorf("queue span of a request that did not wait lasts %v", s.EndTime.Sub(s.StartTime))
				}
			}
		})
	}
}
