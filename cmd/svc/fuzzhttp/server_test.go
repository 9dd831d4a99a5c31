package fuzzhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/openapi"
	"github.com/svc-dev/svc/providers"
	_ "github.com/svc-dev/svc/providers/all"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/metrics"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/rest"
)

// served is one model served by the real fx graph, with the handler stack
// the HTTP server runs (router, access log, headers) and the answers to a
// valid v1 and v2 request, taken before any fuzzing.
type served struct {
	name    string
	app     *fx.App
	handler http.Handler
	logs    *observer.ObservedLogs
	// predict and infer are valid bodies of POST /predict and POST
	// /v2/models/{name}/infer; wantPredict and wantInfer their answers.
	predict, infer         string
	wantPredict, wantInfer []byte
	// mu serialises requests: the check after each input compares the log
	// and the answer of one request at a time.
	mu sync.Mutex
}

// models are the served models: float, integer, bool, string and
// multi-input signatures, with a valid body for each protocol.
var models = []struct {
	file, predict, infer string
}{
	{"classifier.onnx",
		`{"input":[[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]}`,
		`{"inputs":[{"name":"input","shape":[2,4],"datatype":"FP32","data":[5.1,3.5,1.4,0.2,6.7,3.0,5.2,2.3]}]}`},
	{"multi_input.onnx",
		`{"features":[[1,2,3],[-1,0.5,0]],"ids":[[1,2],[10,-20]],"mask":[[true,false],[false,false]],"text":["hello world","Grüße, straße!"]}`,
		`{"inputs":[{"name":"features","shape":[2,3],"datatype":"FP32","data":[1,2,3,-1,0.5,0]},{"name":"ids","shape":[2,2],"datatype":"INT64","data":[1,2,10,-20]},{"name":"mask","shape":[2,2],"datatype":"BOOL","data":[true,false,false,false]},{"name":"text","shape":[2],"datatype":"BYTES","data":["hello world","Grüße, straße!"]}]}`},
	{"alltypes.onnx",
		`{"f64":[1,2.718281828459045,0,-1],"i8":[-128,127],"i16":[-32768,32767],"i32":[-2147483648,2147483647],"u8":[0,255],"u16":[0,65535],"u32":[0,4294967295],"u64":[0,1,18446744073709551615]}`,
		`{"inputs":[{"name":"f64","shape":[4],"datatype":"FP64","data":[1,2.718281828459045,0,-1]},{"name":"i8","shape":[2],"datatype":"INT8","data":[-128,127]},{"name":"i16","shape":[2],"datatype":"INT16","data":[-32768,32767]},{"name":"i32","shape":[2],"datatype":"INT32","data":[-2147483648,2147483647]},{"name":"u8","shape":[2],"datatype":"UINT8","data":[0,255]},{"name":"u16","shape":[2],"datatype":"UINT16","data":[0,65535]},{"name":"u32","shape":[2],"datatype":"UINT32","data":[0,4294967295]},{"name":"u64","shape":[3],"datatype":"UINT64","data":[0,1,18446744073709551615]}]}`},
}

// Limits small enough for the fuzzer to reach: the element, string and
// body limits answer 413 or 400 before the model runs.
const (
	maxBodyBytes    = 64 << 10
	maxElements     = 256
	maxStringLength = 64
)

var servers struct {
	once sync.Once
	list []*served
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range servers.list {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.app.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s: %v\n", s.name, err)
			code = max(code, 1)
		}
		cancel()
	}
	// Every goroutine the servers started has ended with them.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// startAll starts every model once per process (each fuzz worker is a
// process of its own) and returns them.
func startAll(tb testing.TB) []*served {
	tb.Helper()
	servers.once.Do(func() {
		env := onnxrttest.Load(tb)
		for _, m := range models {
			s, err := start(env, m.file, m.predict, m.infer)
			if err != nil {
				servers.err = fmt.Errorf("serve %s: %w", m.file, err)
				return
			}
			servers.list = append(servers.list, s)
		}
	})
	if servers.err != nil {
		tb.Fatal(servers.err)
	}
	return servers.list
}

// start builds the fx graph of 'svc serve' (cmd/svc/serve.go runServer) for
// one model, on a loopback port nobody calls: the requests go straight to
// the handler the server runs. The one difference is the ONNX Runtime
// environment, shared by the models of this process (there is one per
// process) instead of built by onnxrt.Module.
func start(env *onnxrt.Env, file, predict, infer string) (*served, error) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		return nil, err
	}
	cfg := config.Default()
	cfg.Serve.Host, cfg.Serve.Port = "127.0.0.1", 0
	cfg.Limits.MaxBodyBytes = maxBodyBytes
	cfg.Limits.MaxElements = maxElements
	cfg.Limits.MaxStringLength = maxStringLength
	src, err := registry.Resolve(filepath.Join(root, "testdata", "models", file), cfg, registry.Open(filepath.Join(os.TempDir(), "svc-fuzz-no-registry")))
	if err != nil {
		return nil, err
	}
	// Warnings and worse are recorded; a recovered handler panic is logged
	// at error level by the access log.
	obsCore, logs := observer.New(zapcore.WarnLevel)
	log := zap.New(obsCore)
	threads, slots := sched.CPUPlan(1, 1)
	cfg.Runtime.IntraOpThreads = threads
	b := cfg.Batching
	sc := sched.Config{Sessions: 1, Slots: slots, ReleaseMemoryAfter: cfg.Runtime.ReleaseMemoryAfter.Std(),
		Batching: sched.Batching{Enabled: b.Enabled, MaxBatchSize: b.MaxBatchSize, MaxQueueDelay: b.MaxQueueDelay.Std(), Adaptive: b.Adaptive}}
	var (
		server *transport.HTTPServer
		model  *core.Model
		loader *core.Loader
		errs   transport.ErrorWriter
	)
	app := fx.New(
		fx.Supply(src, log, sc, core.LoadOptions{WarmUp: cfg.Runtime.WarmUp}, env,
			onnxrt.Verbose(false),
			providers.Requested(""),
			oip.ServerVersion("fuzz"),
		),
		fx.Provide(cfg.Sections),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		transport.Module,
		rest.Module,
		metrics.Module,
		oip.Module,
		openapi.Module,
		providers.Module(),
		core.Module,
		session.Module,
		sched.Module,
		fx.Provide(func(env *onnxrt.Env) providers.Host {
			avail, _ := env.AvailableProviders()
			return providers.NewHost(env.LibraryPath(), avail)
		}),
		fx.Populate(&loader, &model, &server, &errs),
	)
	if err := app.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return nil, err
	}
	loader.Start()
	<-model.Done()
	if err := model.Err(); err != nil {
		_ = app.Stop(ctx)
		return nil, err
	}
	policy, err := config.ParseAccessLog(cfg.Serve.AccessLog)
	if err != nil {
		return nil, err
	}
	// The stack of transport.newHTTPServerFx.
	h := transport.Chain(transport.NewRouter(server.Routes, errs), transport.AccessLog(log, errs, policy), transport.Headers(nil))
	s := &served{name: src.Name, app: app, handler: h, logs: logs, predict: predict, infer: infer}
	var status int
	if status, s.wantPredict = s.serve(http.MethodPost, rest.PathPredict, "application/json", predict); status != http.StatusOK {
		return nil, fmt.Errorf("valid /predict: %d %s", status, s.wantPredict)
	}
	if status, s.wantInfer = s.serve(http.MethodPost, s.inferPath(), "application/json", infer); status != http.StatusOK {
		return nil, fmt.Errorf("valid v2 infer: %d %s", status, s.wantInfer)
	}
	return s, nil
}

func (s *served) inferPath() string { return "/v2/models/" + s.name + "/infer" }

// serve sends one plain request through the handler.
func (s *served) serve(method, path, contentType, body string) (int, []byte) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

// methods and paths the fuzzer picks from by index: the real routes, with
// {name} filled in, and near misses.
var methods = []string{http.MethodPost, http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch, "BREW"}

func paths(name string) []string {
	return []string{
		"/predict", "/v2/models/" + name + "/infer", "/v2/models/" + name + "/versions/1/infer",
		"/health", "/info", "/metrics", "/openapi.json", "/docs", "/redoc",
		"/v2", "/v2/health/live", "/v2/health/ready", "/v2/models/" + name, "/v2/models/" + name + "/ready",
		"/v2/models/" + name + "/versions/1", "/v2/models/" + name + "/versions/1/ready",
		"/v2/models/" + name + "/stats", "/v2/models/" + name + "/versions/1/stats",
		"/v2/models/other/infer", "/v2/models/" + name + "/versions/999/infer", "/v2/models//infer",
		"/predict/", "/PREDICT", "//predict", "/predict?x=1", "/v2/models/" + name + "/infer/",
		"/v2/", "/", "/nope", "/docs/assets/x.js", "/v2/models/%00/infer", "/v2/models/" + name + "/infer?binary_data_output=true",
	}
}

// isV2 tells the paths whose errors are {"error"} (the Open Inference
// Protocol) from the v1 ones ({"detail"}).
func isV2(path string) bool { return path == "/v2" || strings.HasPrefix(path, "/v2/") }

// header is a fuzzed header value that can go on the wire: Go's client
// and server refuse control characters other than tab, so such values are
// left out.
func header(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", false
		}
	}
	return v, true
}

// FuzzServer checks, for any method, path, headers and body (seeds in
// testdata/fuzz/FuzzServer): no handler panic; a non-200 answer is a JSON
// error in the protocol's form ({"detail"} on v1 paths, {"error"} on v2
// ones, the router's 404/405 included) with a 4xx status, 503 or 504,
// or the spec's 500 "Inference failed" when ONNX Runtime fails running the
// model (never another 500); a 200 JSON answer is valid JSON; and
// afterwards a valid request of each protocol gets exactly the answer it
// got before fuzzing.
func FuzzServer(f *testing.F) {
	f.Fuzz(func(t *testing.T, model, method, path uint8, rawPath, contentType, encoding, inferHeaderLen, requestID, accept string, body []byte) {
		list := startAll(t)
		s := list[int(model)%len(list)]
		s.mu.Lock()
		defer s.mu.Unlock()
		// path picks a real route or a near miss, or (one more than the
		// list) the fuzzed rawPath.
		ps := append(paths(s.name), "/"+rawPath)
		target := ps[int(path)%len(ps)]
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // not a request target a client can send
		}
		m, p := methods[int(method)%len(methods)], u.Path

		r := httptest.NewRequest(m, "/", bytes.NewReader(body))
		r.URL, r.RequestURI = u, target
		for _, h := range []struct{ name, value string }{
			{"Content-Type", contentType}, {"Content-Encoding", encoding},
			{"Inference-Header-Content-Length", inferHeaderLen},
			{"X-Request-ID", requestID}, {"Accept", accept},
		} {
			if v, ok := header(h.value); ok {
				r.Header.Set(h.name, v)
			}
		}
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, r)
		checkLogs(t, s, m, p)
		checkAnswer(t, m, p, w)

		for _, valid := range []struct {
			path, body string
			want       []byte
		}{{rest.PathPredict, s.predict, s.wantPredict}, {s.inferPath(), s.infer, s.wantInfer}} {
			status, got := s.serve(http.MethodPost, valid.path, "application/json", valid.body)
			if status != http.StatusOK || !bytes.Equal(got, valid.want) {
				t.Fatalf("after %s %s: the valid request to %s got %d %s, want 200 %s", m, p, valid.path, status, got, valid.want)
			}
			checkLogs(t, s, http.MethodPost, valid.path)
		}
	})
}

// checkLogs fails on a handler panic or any other error-level log line.
func checkLogs(t *testing.T, s *served, method, path string) {
	t.Helper()
	for _, e := range s.logs.TakeAll() {
		if e.Level >= zapcore.ErrorLevel || strings.Contains(e.Message, "panic") {
			t.Errorf("%s %s on %s logged %s %q: %v", method, path, s.name, e.Level, e.Message, e.ContextMap())
		}
	}
}

// modelFailed is true for the spec's inference-failure body: ONNX Runtime
// returned an error while running the model ("Inference failed: " and
// ONNX Runtime's "Non-zero status code returned while running" of a node).
// A handler panic or any other 500 ("Internal server error") is not.
func modelFailed(body []byte) bool {
	var e map[string]string
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	msg := e["detail"] + e["error"]
	return strings.HasPrefix(msg, "Inference failed: ") && strings.Contains(msg, "returned while running")
}

// checkAnswer checks the status and the form of the answer.
func checkAnswer(t *testing.T, method, path string, w *httptest.ResponseRecorder) {
	t.Helper()
	body := w.Body.Bytes()
	if w.Code == http.StatusOK {
		if method != http.MethodHead && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && !json.Valid(body) {
			t.Errorf("%s %s: 200 with invalid JSON: %q", method, path, body)
		}
		return
	}
	switch {
	case w.Code >= 400 && w.Code < 500, w.Code == http.StatusServiceUnavailable, w.Code == http.StatusGatewayTimeout:
	case w.Code == http.StatusInternalServerError && modelFailed(body):
		// The spec's 500: the model itself failed on an input the server
		// accepted (a model may refuse inputs the server cannot foresee).
	default:
		t.Fatalf("%s %s: status %d (want 200, 4xx, 503, 504, or 500 \"Inference failed\"): %q", method, path, w.Code, body)
	}
	if method == http.MethodHead {
		return
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: %d with Content-Type %q: %q", method, path, w.Code, ct, body)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("%s %s: %d with a body that is not a JSON object (%v): %q", method, path, w.Code, err, body)
	}
	key := "detail"
	if isV2(path) {
		key = "error"
	}
	var msg string
	if raw, ok := fields[key]; !ok || len(fields) != 1 || json.Unmarshal(raw, &msg) != nil || msg == "" {
		t.Errorf("%s %s: %d, want {%q: non-empty string}: %q", method, path, w.Code, key, body)
	}
}
