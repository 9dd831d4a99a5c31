package main_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// collector is an OTLP trace receiver over gRPC and HTTP (protobuf), built
// on the official OTLP protobuf definitions: it keeps every span it
// receives, with its resource's service.name.
type collector struct {
	coltrace.UnimplementedTraceServiceServer
	GRPC, HTTP string // the receivers' endpoints, http://host:port

	mu      sync.Mutex
	spans   []gotSpan
	changed chan struct{} // closed and replaced when spans arrive
}

// gotSpan is a received span and the service it came from.
type gotSpan struct {
	*tracepb.Span
	service string
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{changed: make(chan struct{})}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, c)
	go func() { _ = gs.Serve(gl) }()
	t.Cleanup(gs.Stop)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		req := &coltrace.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(b, req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.add(req)
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(hl) }()
	t.Cleanup(func() { _ = hs.Close() })
	c.GRPC, c.HTTP = "http://"+gl.Addr().String(), "http://"+hl.Addr().String()
	return c
}

// Export is the gRPC receiver.
func (c *collector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	c.add(req)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

func (c *collector) add(req *coltrace.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, gotSpan{s, service})
			}
		}
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// trace waits until the spans of traceID include one of each name, and
// returns them by name (the server span under "server"). The server
// exports them within its batch delay (OTEL_BSP_SCHEDULE_DELAY); the
// test's own deadline bounds the wait.
func (c *collector) trace(t *testing.T, traceID []byte, names ...string) map[string]gotSpan {
	t.Helper()
	for {
		c.mu.Lock()
		got := map[string]gotSpan{}
		for _, s := range c.spans {
			if string(s.TraceId) != string(traceID) {
				continue
			}
			name := s.Name
			if s.Kind == tracepb.Span_SPAN_KIND_SERVER {
				name = "server"
			}
			got[name] = s
		}
		changed := c.changed
		c.mu.Unlock()
		complete := true
		for _, n := range names {
			if _, ok := got[n]; !ok {
				complete = false
			}
		}
		if complete {
			return got
		}
		<-changed
	}
}

// attr is a span's attribute by key, as text ("" when absent).
func attr(s gotSpan, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			v := kv.GetValue()
			if v.GetStringValue() != "" {
				return v.GetStringValue()
			}
			return fmt.Sprint(v.GetIntValue())
		}
	}
	return ""
}

// traceparent is a W3C traceparent of a sampled client span.
func traceparent(traceID, spanID []byte) string {
	return "00-" + hex.EncodeToString(traceID) + "-" + hex.EncodeToString(spanID) + "-01"
}

// TestTracing: a real server exports, to a real OTLP receiver, one server
// span per request continuing the client's trace (its traceparent), with
// the semantic-convention attributes, and under it the decode, queue,
// inference (with its batch size) and encode spans; the access log line
// carries the trace id. Over /predict, v2 REST and gRPC, exported over
// OTLP/HTTP and OTLP/gRPC, configured by OTEL_* variables or svc.yml, one
// process or two workers; with tracing.spans: request, the server span
// alone, carrying the batch size.
func TestTracing(t *testing.T) {
	t.Parallel()
	col := startCollector(t)
	cases := []struct {
		name     string
		env      []string
		yml      string // svc.yml's tracing section, "" for none
		workers  string
		call     string // predict, v2, grpc
		protocol string
		spans    string // tracing.spans; "" is steps
	}{
		{name: "env http /predict", call: "predict", env: []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.HTTP, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_TRACES_SAMPLER=always_on", "OTEL_SERVICE_NAME=svc-env-http"}},
		{name: "env grpc v2", call: "v2", env: []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.GRPC, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
			"OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0", "OTEL_SERVICE_NAME=svc-env-grpc"}},
		{name: "svc.yml grpc call", call: "grpc",
			yml: "tracing:\n  enabled: true\n  endpoint: " + col.GRPC + "\n  protocol: grpc\n  sampler: always_on\n  service_name: svc-yml\n"},
		{name: "svc.yml workers", call: "predict", workers: "2",
			yml: "tracing:\n  enabled: true\n  endpoint: " + col.HTTP + "\n  sampler: parentbased_always_on\n  service_name: svc-yml-workers\n"},
		{name: "svc.yml spans request", call: "v2", spans: "request",
			yml: "tracing:\n  enabled: true\n  endpoint: " + col.HTTP + "\n  sampler: always_on\n  service_name: svc-yml-request\n  spans: request\n"},
		{name: "svc.yml spans request grpc", call: "grpc", spans: "request",
			yml: "tracing:\n  enabled: true\n  endpoint: " + col.GRPC + "\n  protocol: grpc\n  sampler: always_on\n  service_name: svc-yml-request-grpc\n  spans: request\n"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{model("classifier.onnx")}
			if tc.yml != "" {
				cfg := filepath.Join(t.TempDir(), "svc.yml")
				if err := os.WriteFile(cfg, []byte(tc.yml), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			if tc.workers != "" {
				args = append(args, "--workers", tc.workers)
			}
			port := ""
			if tc.call == "grpc" {
				port = freePort(t)
				args = append(args, "--grpc-port", port)
			}
			env := append([]string{"OTEL_BSP_SCHEDULE_DELAY=50"}, tc.env...)
			s := startServerEnv(t, env, args...)

			traceID := []byte(fmt.Sprintf("trace-case-%05d", i))
			spanID := []byte("client-" + fmt.Sprint(i))
			tp := traceparent(traceID, spanID)
			switch tc.call {
			case "predict":
				if r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`), "traceparent", tp); r.Status != 200 {
					t.Fatalf("/predict: %d %s", r.Status, r.Body)
				}
			case "v2":
				body := `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[5.1,3.5,1.4,0.2]}]}`
				if r := s.do(http.MethodPost, "/v2/models/classifier/infer", "application/json", strings.NewReader(body), "traceparent", tp); r.Status != 200 {
					t.Fatalf("v2 infer: %d %s", r.Status, r.Body)
				}
			case "grpc":
				c := grpcClient(t, "127.0.0.1:"+port)
				ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", tp)
				req := &inference.ModelInferRequest{ModelName: "classifier", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
					Name: "input", Datatype: "FP32", Shape: []int64{1, 4},
					Contents: &inference.InferTensorContents{Fp32Contents: []float32{5.1, 3.5, 1.4, 0.2}}}}}
				if _, err := c.Infer(ctx, req); err != nil {
					t.Fatal(err)
				}
			}

			steps := []string{"decode", "queue", "inference", "encode"}
			var spans map[string]gotSpan
			if tc.spans == "request" {
				// The server span alone, with the batch size. The step
				// spans would have ended, and been queued for export,
				// before it: once it is in, none of them is coming.
				spans = col.trace(t, traceID, "server")
				for _, name := range steps {
					if _, ok := spans[name]; ok {
						t.Errorf("a %s span with tracing.spans: request", name)
					}
				}
				if got := attr(spans["server"], "svc.batch_size"); got != "1" {
					t.Errorf("server span's svc.batch_size = %q, want 1", got)
				}
			} else {
				spans = col.trace(t, traceID, append([]string{"server"}, steps...)...)
				for _, name := range steps {
					if sp := spans[name]; string(sp.ParentSpanId) != string(spans["server"].SpanId) {
						t.Errorf("%s span's parent %x, want the server span %x", name, sp.ParentSpanId, spans["server"].SpanId)
					}
				}
				if got := attr(spans["inference"], "svc.batch_size"); got != "1" {
					t.Errorf("inference span's svc.batch_size = %q, want 1", got)
				}
			}
			server := spans["server"]
			if string(server.ParentSpanId) != string(spanID) {
				t.Errorf("server span's parent %x, want the client's span %x", server.ParentSpanId, spanID)
			}
			if tc.call == "grpc" {
				if attr(server, "rpc.method") == "" && !strings.Contains(server.Name, "ModelInfer") {
					t.Errorf("gRPC server span %q lacks the RPC's method: %v", server.Name, server.Attributes)
				}
			} else if got := attr(server, "http.request.method"); got != "POST" {
				t.Errorf("server span's http.request.method = %q, want POST (%v)", got, server.Attributes)
			}
			wantService := map[string]string{"env http /predict": "svc-env-http", "env grpc v2": "svc-env-grpc",
				"svc.yml grpc call": "svc-yml", "svc.yml workers": "svc-yml-workers",
				"svc.yml spans request": "svc-yml-request", "svc.yml spans request grpc": "svc-yml-request-grpc"}[tc.name]
			if server.service != wantService {
				t.Errorf("service.name %q, want %q", server.service, wantService)
			}

			// The access log line (or rpc line) carries the trace id.
			msg := "request"
			if tc.call == "grpc" {
				msg = "rpc"
			}
			id := hex.EncodeToString(traceID)
			s.waitLog(msg, 1, func(m map[string]any) bool { return m["trace_id"] == id })
			s.stopNoPanic()
		})
	}
}

// TestTracingUnsampledRPCLog: with tracing on and nothing sampled, a gRPC
// call's rpc log line carries the caller's trace id when the call brings a
// traceparent, and none when it does not (no made-up id that no span was
// exported under), as the HTTP access log does.
func TestTracingUnsampledRPCLog(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("tracing:\n  enabled: true\n  endpoint: http://127.0.0.1:9\n  sampler: always_off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := startServer(t, model("classifier.onnx"), "--config", cfg, "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	req := &inference.ModelInferRequest{ModelName: "classifier", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "input", Datatype: "FP32", Shape: []int64{1, 4},
		Contents: &inference.InferTensorContents{Fp32Contents: []float32{5.1, 3.5, 1.4, 0.2}}}}}
	traceID := []byte("unsampled-trace!")
	for _, ctx := range []context.Context{
		context.Background(),
		metadata.AppendToOutgoingContext(context.Background(), "traceparent", traceparent(traceID, []byte("caller-1"))),
	} {
		if _, err := c.Infer(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	recs := s.waitLog("rpc", 2, func(m map[string]any) bool { return strings.HasSuffix(fmt.Sprint(m["grpc_method"]), "ModelInfer") })
	if id, ok := recs[0]["trace_id"]; ok {
		t.Errorf("the call without a traceparent logged trace_id %v", id)
	}
	if got, want := recs[1]["trace_id"], hex.EncodeToString(traceID); got != want {
		t.Errorf("the call with a traceparent logged trace_id %v, want the caller's %s", got, want)
	}
}

// TestTracingDeadCollector: with every request sampled and no OTLP
// receiver listening, svc answers as usual, says in its own log (a JSON
// warning, not a line of the SDK's in another format) that an export
// failed, and stops cleanly at SIGTERM, over either exporter protocol.
func TestTracingDeadCollector(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			endpoint := "127.0.0.1:" + freePort(t) // nothing listens there
			s := startServerEnv(t, []string{
				"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
				"OTEL_TRACES_SAMPLER=always_on", "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_EXPORTER_OTLP_TIMEOUT=500",
			}, model("classifier.onnx"))
			if r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`)); r.Status != 200 {
				t.Fatalf("/predict: %d %s", r.Status, r.Body)
			}
			s.waitLog("tracing failed", 1, func(m map[string]any) bool {
				return m["level"] == "warn" && strings.Contains(fmt.Sprint(m["error"]), endpoint)
			})
			s.stopNoPanic()
			for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("a log line that is not JSON: %q", line)
				}
			}
		})
	}
}
