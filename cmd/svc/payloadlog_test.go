package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// ceReceiver is a CloudEvents receiver built on the CloudEvents Go SDK:
// it answers each event with answer's result and keeps the events it
// accepts, with the HTTP headers they came with.
type ceReceiver struct {
	url     string
	mu      sync.Mutex
	events  []cloudevents.Event
	headers map[string]http.Header // by ce-type and ce-id
}

func startCEReceiver(t *testing.T, answer func(cloudevents.Event) protocol.Result) *ceReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &ceReceiver{url: "http://" + ln.Addr().String() + "/", headers: map[string]http.Header{}}
	keep := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
			r.mu.Lock()
			r.headers[q.Header.Get("Ce-Type")+" "+q.Header.Get("Ce-Id")] = q.Header.Clone()
			r.mu.Unlock()
			next.ServeHTTP(w, q)
		})
	}
	p, err := cehttp.New(cehttp.WithListener(ln), cehttp.WithMiddleware(keep))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cloudevents.NewClient(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.StartReceiver(ctx, func(_ context.Context, e cloudevents.Event) protocol.Result {
			res := answer(e)
			if protocol.IsACK(res) {
				r.mu.Lock()
				r.events = append(r.events, e)
				r.mu.Unlock()
			}
			return res
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("receiver: %v", err)
		}
	})
	return r
}

func (r *ceReceiver) received() []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cloudevents.Event(nil), r.events...)
}

// loggerConfig writes svc.yml serving the classifier as "iris", with API
// keys from SVC_API_KEYS and the given logger section (a YAML flow
// mapping).
func loggerConfig(t *testing.T, section string) string {
	t.Helper()
	yml := fmt.Sprintf("access:\n  api_keys_env: SVC_API_KEYS\nmodels:\n  iris:\n    path: %s\n    logger: %s\n",
		model("classifier.onnx"), section)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const loggerKey = "sk-logger-test-key"

// logged is what a client sent and got, by request id.
type logged struct {
	reqType, respType string
	req, resp         []byte
	grpcReq           *inference.ModelInferRequest
	grpcResp          *inference.ModelInferResponse
	// grpcStreamResp answers a request of ModelStreamInfer.
	grpcStreamResp *inference.ModelStreamInferResponse
}

// loggedAsk sends one request with id through one protocol, with the API
// key and headers that must not be logged beside one that must.
type loggedAsk func(t *testing.T, s *server, gc *grpcapi.Client, id string) logged

func loggedHTTP(path, contentType string, body []byte, extra ...string) loggedAsk {
	return func(t *testing.T, s *server, _ *grpcapi.Client, id string) logged {
		h := append([]string{"X-Request-ID", id, "Authorization", "Bearer " + loggerKey, "X-Secret", "s3cret", "X-Kept", "kept"}, extra...)
		r := s.do(http.MethodPost, path, contentType, bytes.NewReader(body), h...)
		if r.Status != http.StatusOK && !strings.HasPrefix(id, "bad") {
			t.Errorf("%s %s: %d %s", path, id, r.Status, r.Body)
		}
		return logged{reqType: contentType, respType: r.Header.Get("Content-Type"), req: body, resp: r.Body}
	}
}

func v2BinaryBody() ([]byte, string) {
	header := `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}]}`
	body := []byte(header)
	for _, v := range irisAsked {
		body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
	}
	return body, fmt.Sprint(len(header))
}

func loggedGRPC(t *testing.T, _ *server, gc *grpcapi.Client, id string) logged {
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4}, Data: irisAsked}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-request-id", id, "x-secret", "s3cret", "x-kept", "kept",
		"authorization", "Bearer "+loggerKey)
	req := grpcapi.RawRequest("iris", grpcapi.Input{Name: "input", Tensor: x})
	var md metadata.MD
	resp, err := gc.Service().ModelInfer(ctx, req, grpc.Header(&md))
	if err != nil {
		t.Errorf("gRPC %s: %v", id, err)
	}
	if got := md.Get("x-request-id"); len(got) != 1 || got[0] != id {
		t.Errorf("gRPC %s: x-request-id %v", id, got)
	}
	return logged{grpcReq: req, grpcResp: resp}
}

// TestPayloadLogger: under load, through every protocol, a CloudEvents
// receiver gets each inference's request and response exactly once, as
// the client sent and got them, correlated by the request id, with
// KServe's attributes; the API key and the listed headers are never sent;
// requests that are not inferences are not logged.
func TestPayloadLogger(t *testing.T) {
	t.Parallel()
	rc := startCEReceiver(t, func(cloudevents.Event) protocol.Result { return cloudevents.ResultACK })
	port := freePort(t)
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + loggerKey}, "iris",
		"--config", loggerConfig(t, "{url: "+rc.url+", redact: [X-Secret]}"), "--grpc-port", port)
	gc := grpcClient(t, "127.0.0.1:"+port, grpcapi.WithAPIKey(loggerKey))
	bin, headerLen := v2BinaryBody()
	asks := map[string]loggedAsk{
		"v1":    loggedHTTP("/predict", "application/json", []byte(`{"input": [[5.9, 3.0, 4.2, 1.5]]}`)),
		"v2j":   loggedHTTP("/v2/models/iris/infer", "application/json", []byte(v2Body(""))),
		"v2b":   loggedHTTP("/v2/models/iris/infer", "application/octet-stream", bin, "Inference-Header-Content-Length", headerLen),
		"grpc":  loggedGRPC,
		"bad-1": loggedHTTP("/v2/models/iris/infer", "application/json", []byte(`{"inputs":[{"name":"input","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`)),
	}
	const each = 25
	sent := map[string]logged{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, ask := range asks {
		for i := range each {
			wg.Go(func() {
				id := fmt.Sprintf("%s-%d", name, i)
				l := ask(t, s, gc, id)
				mu.Lock()
				sent[id] = l
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	// Not inferences: never logged.
	s.get("/v2/models/iris")
	s.get("/health")
	want := 2 * len(sent)
	waitUntil(t, s.done, "every event received", func() error {
		if n := len(rc.received()); n < want {
			return fmt.Errorf("%d events of %d", n, want)
		}
		return nil
	})
	// Stopped, the server has drained its queue: a duplicate would be in.
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("svc exited %d", code)
	}
	checkLogged(t, rc, "iris", sent)
}

func checkLogged(t *testing.T, rc *ceReceiver, source string, sent map[string]logged) {
	t.Helper()
	events := rc.received()
	if len(events) != 2*len(sent) {
		t.Errorf("%d events, want %d: a request and a response for each of %d requests", len(events), 2*len(sent), len(sent))
	}
	seen := map[string]int{}
	for _, e := range events {
		key := e.Type() + " " + e.ID()
		seen[key]++
		l, ok := sent[e.ID()]
		if !ok {
			t.Errorf("event %s: no request had that id", key)
			continue
		}
		if e.Source() != source || e.SpecVersion() != "1.0" || e.Time().IsZero() {
			t.Errorf("event %s: source %q specversion %q time %v", key, e.Source(), e.SpecVersion(), e.Time())
		}
		h := rc.headers[key]
		if h.Get("Authorization") != "" || h.Get("X-Secret") != "" {
			t.Errorf("event %s: logged a redacted header: %v", key, h)
		}
		isReq := e.Type() == "org.kubeflow.serving.inference.request"
		if isReq && h.Get("X-Kept") != "kept" {
			t.Errorf("event %s: X-Kept not logged: %v", key, h)
		}
		checkData(t, key, e, l, isReq)
	}
	for id := range sent {
		for _, typ := range []string{"org.kubeflow.serving.inference.request", "org.kubeflow.serving.inference.response"} {
			if n := seen[typ+" "+id]; n != 1 {
				t.Errorf("%s %s received %d times, want once", typ, id, n)
			}
		}
	}
}

// checkData compares an event's data with what the client sent or got.
func checkData(t *testing.T, key string, e cloudevents.Event, l logged, isReq bool) {
	t.Helper()
	if l.grpcReq != nil {
		var got, want proto.Message = &inference.ModelInferRequest{}, proto.Message(l.grpcReq)
		ct := `application/x-protobuf; messageType="inference.ModelInferRequest"`
		switch {
		case !isReq && l.grpcStreamResp != nil:
			got, want = &inference.ModelStreamInferResponse{}, l.grpcStreamResp
			ct = `application/x-protobuf; messageType="inference.ModelStreamInferResponse"`
		case !isReq:
			got, want = &inference.ModelInferResponse{}, l.grpcResp
			ct = `application/x-protobuf; messageType="inference.ModelInferResponse"`
		}
		if err := proto.Unmarshal(e.Data(), got); err != nil || !proto.Equal(got, want) || e.DataContentType() != ct {
			t.Errorf("event %s: %v %q: %v, want %v", key, err, e.DataContentType(), got, want)
		}
		return
	}
	data, ct := l.resp, l.respType
	if isReq {
		data, ct = l.req, l.reqType
	}
	if !bytes.Equal(e.Data(), data) || e.DataContentType() != ct {
		t.Errorf("event %s: %q %q, want %q %q", key, e.DataContentType(), e.Data(), ct, data)
	}
}

// TestPayloadLoggerUndelivered: a receiver that refuses, one that is down,
// one that never answers: every request is answered as without a logger,
// what is not delivered is counted by reason, and svc stops, draining no
// longer than logger.drain.
func TestPayloadLoggerUndelivered(t *testing.T) {
	t.Parallel()
	stuck := make(chan struct{})
	refusing := startCEReceiver(t, func(cloudevents.Event) protocol.Result {
		return cehttp.NewResult(http.StatusBadRequest, "refused")
	})
	slow := startCEReceiver(t, func(cloudevents.Event) protocol.Result {
		<-stuck
		return cloudevents.ResultACK
	})
	// Before the receivers stop (cleanups run last first): the slow one
	// lets its handlers return.
	t.Cleanup(func() { close(stuck) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()
	tests := []struct {
		name, section, reason string
		want                  func(float64) bool
	}{
		{"refusing", "{url: " + refusing.url + "}", "refused", func(v float64) bool { return v == 2*loggerRequests }},
		{"down", "{url: " + down + ", retries: 1}", "failed", func(v float64) bool { return v == 2*loggerRequests }},
		{"slow", "{url: " + slow.url + ", queue: 1, drain: 1s}", "queue_full", func(v float64) bool { return v > 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServerEnv(t, []string{"SVC_API_KEYS=" + loggerKey}, "iris", "--config", loggerConfig(t, tt.section))
			ask := loggedHTTP("/v2/models/iris/infer", "application/json", []byte(v2Body("")))
			for i := range loggerRequests {
				if l := ask(t, s, nil, fmt.Sprint("r", i)); !strings.Contains(string(l.resp), `"data":[1]`) {
					t.Fatalf("request %d: %s", i, l.resp)
				}
			}
			label := `reason="` + tt.reason + `"`
			waitUntil(t, s.done, "svc_logger_dropped_total{"+label+"}", func() error {
				if v := authorizedMetric(t, s, "svc_logger_dropped_total", label); !tt.want(v) {
					return fmt.Errorf("svc_logger_dropped_total{%s} = %v", label, v)
				}
				return nil
			})
			// The slow receiver holds its events past the drain deadline:
			// svc stops all the same.
			if code := s.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("svc exited %d", code)
			}
		})
	}
}

const loggerRequests = 20

// authorizedMetric is metricValue behind the API key.
func authorizedMetric(t *testing.T, s *server, series, label string) float64 {
	t.Helper()
	r := s.do(http.MethodGet, "/metrics", "", nil, "Accept", "text/plain", "Authorization", "Bearer "+loggerKey)
	for line := range strings.SplitSeq(string(r.Body), "\n") {
		if strings.HasPrefix(line, series+"{") && strings.Contains(line, label) {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s{%s} in /metrics:\n%s", series, label, r.Body)
	return 0
}

// TestPayloadLoggerFile: a file sink writes each event as a line of JSON,
// rotated past max_file_size, every event once.
func TestPayloadLoggerFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "payloads.jsonl")
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + loggerKey}, "iris", "--config",
		loggerConfig(t, "{url: 'file://"+path+"', mode: request, max_file_size: 2KiB, max_files: 50, redact: [X-Secret]}"))
	ask := loggedHTTP("/v2/models/iris/infer", "application/json", []byte(v2Body("")))
	for i := range loggerRequests {
		ask(t, s, nil, fmt.Sprint("f", i))
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("svc exited %d", code)
	}
	files, _ := filepath.Glob(path + "*")
	if len(files) < 2 {
		t.Fatalf("files %v: the file was not rotated past 2KiB", files)
	}
	ids := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			e := cloudevents.NewEvent()
			if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
				t.Fatalf("%s: %v\n%s", f, err, sc.Text())
			}
			if e.Type() != "org.kubeflow.serving.inference.request" || e.Source() != "iris" || !strings.Contains(string(e.Data()), `"shape":[1,4]`) {
				t.Errorf("%s: %s", f, sc.Text())
			}
			if h, _ := e.Extensions()["headers"].(string); !strings.Contains(h, `"X-Kept":["kept"]`) ||
				strings.Contains(h, "s3cret") || strings.Contains(h, loggerKey) {
				t.Errorf("%s: headers %s: want X-Kept, never X-Secret or the API key", f, h)
			}
			ids[e.ID()]++
		}
		_ = fh.Close()
	}
	for i := range loggerRequests {
		if n := ids[fmt.Sprint("f", i)]; n != 1 {
			t.Errorf("request f%d logged %d times, want once (mode: request)", i, n)
		}
	}
	if len(ids) != loggerRequests {
		t.Errorf("%d ids logged, want %d", len(ids), loggerRequests)
	}
}
