package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/cmd/internal/bench"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/tensor"

	// The in-process modes take the CPU provider from the registry.
	_ "github.com/svc-dev/svc/providers/all"
	"github.com/svc-dev/svc/transport/rest"
)

var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}()

// fakeServer answers like svc for one model: /info, /health, /metrics, and
// /predict through the real decoder.
type fakeServer struct {
	t       *testing.T
	srv     *httptest.Server
	info    bench.Info
	specs   []tensor.Spec
	conns   atomic.Int64
	predict atomic.Int64
	// fail decides the answer to the n-th /predict (from 1): status and
	// detail, or 0 to decode and answer 200.
	fail func(n int64) (int, string)

	mu     sync.Mutex
	bodies map[string]bool
}

func newFakeServer(t *testing.T, info bench.Info) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, info: info, specs: specsOf(t, info.Inputs), bodies: map[string]bool{}}
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, f.info) })
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]string{"status": "healthy", "model": f.info.Name})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"provider": map[string]any{"name": "CPUExecutionProvider", "available": true}})
	})
	mux.HandleFunc("POST /predict", func(w http.ResponseWriter, r *http.Request) {
		n := f.predict.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if ct := r.Header.Get("Content-Type"); ct == "image/png" {
			f.mu.Lock()
			f.bodies[ct+" "+string(body)] = true
			f.mu.Unlock()
			writeJSON(w, 200, map[string]any{"text": "ok"})
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			writeJSON(w, 415, map[string]string{"detail": "Unsupported Content-Type"})
			return
		}
		if f.fail != nil {
			if status, detail := f.fail(n); status != 0 {
				writeJSON(w, status, map[string]string{"detail": detail})
				return
			}
		}
		if _, err := rest.DecodeRequest(body, f.specs); err != nil {
			writeJSON(w, 400, map[string]string{"detail": err.Error()})
			return
		}
		f.mu.Lock()
		f.bodies[string(body)] = true
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"probabilities": [][]float32{{0.5, 0.25, 0.25}}})
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func classifierInfo(path string) bench.Info {
	return bench.Info{
		Name: "classifier", Version: "3", Path: path,
		Inputs: []bench.Input{{Name: "input", Type: "float32", Shape: []int64{-1, 4}, Required: true}},
	}
}

func options(url string) bench.Options {
	return bench.Options{
		URL: url, Concurrency: []int{1, 3}, Requests: 30, Warmup: 20 * time.Millisecond,
		Timeout: 10 * time.Second, Batch: 1, Seed: 1, Raw: bench.RawOff,
	}
}

// ortLibrary points ONNX Runtime's search at the test library: the raw
// modes load it themselves.
func ortLibrary(t *testing.T) {
	t.Helper()
	t.Setenv(onnxrt.EnvLibraryVar, onnxrttest.LibraryPath(t))
}

func TestRunServedAndRaw(t *testing.T) {
	ortLibrary(t)
	model := filepath.Join(repoRoot, "testdata", "models", "classifier.onnx")
	f := newFakeServer(t, classifierInfo(model))
	o := options(f.srv.URL)
	o.Raw = bench.RawOn
	o.Batch = 2
	var progress bytes.Buffer
	o.Progress = &progress
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}

	if len(r.Served) != 2 || r.Served[0].Concurrency != 1 || r.Served[1].Concurrency != 3 {
		t.Fatalf("served levels = %+v", r.Served)
	}
	for _, l := range r.Served {
		if l.Requests != 30 || l.Errors != 0 || l.StatusCodes["200"] != 30 || l.ThroughputRPS <= 0 || l.LatencyUS.P50 <= 0 {
			t.Fatalf("served level = %+v", l)
		}
	}
	// Each worker keeps one connection alive: one for /info and the probe,
	// then one per worker per level.
	if c := f.conns.Load(); c > 1+1+3 {
		t.Fatalf("%d connections: the workers do not keep their connections alive", c)
	}
	// Probe (8 bodies) + 2 levels × (warm-up + 30).
	if n := f.predict.Load(); n < 8+60 {
		t.Fatalf("the server saw %d /predict requests", n)
	}
	if len(f.bodies) != bench.DefaultBodies {
		t.Fatalf("the server saw %d distinct bodies, want %d rotated", len(f.bodies), bench.DefaultBodies)
	}
	for b := range f.bodies {
		if !strings.HasPrefix(b, `{"input":[[`) {
			t.Fatalf("body %s", b)
		}
	}
	if len(r.Model.Inputs) != 1 || len(r.Model.Inputs[0].Shape) != 2 || r.Model.Inputs[0].Shape[0] != 2 {
		t.Fatalf("planned inputs = %+v, want input [2, 4]", r.Model.Inputs)
	}

	if r.RawSkipped != "" || len(r.Raw) != 2 || len(r.RawCodec) != 2 {
		t.Fatalf("raw = %+v, raw_codec = %+v, skipped %q", r.Raw, r.RawCodec, r.RawSkipped)
	}
	for _, l := range append(append([]bench.Level{}, r.Raw...), r.RawCodec...) {
		if l.Requests != 30 || l.Errors != 0 || l.ThroughputRPS <= 0 || l.StatusCodes != nil {
			t.Fatalf("in-process level = %+v", l)
		}
	}
	if len(r.Ratios) != 2 || r.Ratios[1].Concurrency != 3 || r.Ratios[0].ThroughputServedOverRaw == nil || r.Ratios[0].P50ServedMinusRawCodecUS == nil {
		t.Fatalf("ratios = %+v", r.Ratios)
	}
	if r.Target.Provider != "CPUExecutionProvider" || r.Target.RawProvider != "CPUExecutionProvider" || r.Target.ModelFile != model || r.Target.StartedServer {
		t.Fatalf("target = %+v", r.Target)
	}
	if !r.Machine.SharedWithServer || r.Machine.CPUs != runtime.NumCPU() {
		t.Fatalf("machine = %+v", r.Machine)
	}
	if !strings.Contains(progress.String(), "raw+codec  concurrency 3") {
		t.Fatalf("progress:\n%s", progress.String())
	}

	// The JSON field names are part of the interface.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"machine", "model", "notes", "ratios", "raw", "raw_codec", "schema", "served", "settings", "target"}
	if got := keys(doc); strings.Join(got, ",") != strings.Join(wantKeys, ",") {
		t.Fatalf("report keys = %v, want %v", got, wantKeys)
	}
	level := doc["served"].([]any)[0].(map[string]any)
	if got := strings.Join(keys(level), ","); got != "concurrency,elapsed_s,errors,latency_us,requests,status_codes,throughput_rps" {
		t.Fatalf("level keys = %s", got)
	}
	if got := strings.Join(keys(level["latency_us"].(map[string]any)), ","); got != "max,mean,min,p50,p90,p99" {
		t.Fatalf("latency keys = %s", got)
	}
	ratio := doc["ratios"].([]any)[0].(map[string]any)
	if got := strings.Join(keys(ratio), ","); got != "concurrency,p50_served_minus_raw_codec_us,p50_served_minus_raw_us,throughput_served_over_raw,throughput_served_over_raw_codec" {
		t.Fatalf("ratio keys = %s", got)
	}

	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"svc bench: classifier (version 3) at " + f.srv.URL,
		"input: input float32 [2, 4]; 8 random bodies",
		"load generator shares them with the server",
		"served: HTTP POST /predict",
		"raw: in-process Predict",
		"raw+codec: in-process DecodeRequest + Predict + AppendJSON",
		"concurrency  requests  throughput",
		"served vs in-process",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestRunCountsServerErrors(t *testing.T) {
	f := newFakeServer(t, classifierInfo(""))
	f.fail = func(n int64) (int, string) {
		if n > bench.DefaultBodies && n%5 == 0 {
			return 500, "Inference failed: boom"
		}
		return 0, ""
	}
	o := options(f.srv.URL)
	o.Concurrency, o.Requests, o.Warmup = []int{2}, 100, 0
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	l := r.Served[0]
	if l.Requests != 100 || l.Errors < 15 || l.Errors > 25 || l.StatusCodes["500"] != l.Errors || l.StatusCodes["200"] != 100-l.Errors {
		t.Fatalf("level = %+v, want about 20 errors", l)
	}
	if l.FirstError != "status 500: Inference failed: boom" {
		t.Fatalf("first error = %q", l.FirstError)
	}
	if r.RawSkipped != "--no-raw" || len(r.Raw) != 0 || len(r.Ratios) != 0 {
		t.Fatalf("raw = %+v, skipped %q, ratios %+v", r.Raw, r.RawSkipped, r.Ratios)
	}
	var table bytes.Buffer
	_ = r.WriteTable(&table)
	if !strings.Contains(table.String(), "errors: served concurrency 2: ") {
		t.Fatalf("table does not show the errors:\n%s", table.String())
	}
}

func TestRunRefusesRejectedInput(t *testing.T) {
	f := newFakeServer(t, bench.Info{Name: "cls", Inputs: []bench.Input{{Name: "x", Type: "float32", Shape: []int64{-1, 3, -1, -1}, Required: true}}})
	f.fail = func(int64) (int, string) { return 500, "Inference failed: kernel larger than the input" }
	_, err := bench.Run(context.Background(), options(f.srv.URL))
	if err == nil || !strings.Contains(err.Error(), "status 500: Inference failed: kernel larger") || !strings.Contains(err.Error(), "--shape NAME=D0,D1") {
		t.Fatalf("err = %v", err)
	}
	if n := f.predict.Load(); n != 1 {
		t.Fatalf("%d /predict requests after a rejected probe, want 1", n)
	}
}

func TestRunRawSkipped(t *testing.T) {
	f := newFakeServer(t, classifierInfo("/nonexistent/classifier.onnx"))
	o := options(f.srv.URL)
	o.Raw = bench.RawAuto
	o.Concurrency = []int{1}
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.RawSkipped, "not on this machine") || len(r.Raw) != 0 || len(r.RawCodec) != 0 || len(r.Ratios) != 0 {
		t.Fatalf("raw skipped %q, raw %+v", r.RawSkipped, r.Raw)
	}
	o.Raw = bench.RawOn
	if _, err := bench.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--raw") {
		t.Fatalf("--raw without the model file: err = %v", err)
	}
}

func TestRunInputFile(t *testing.T) {
	f := newFakeServer(t, classifierInfo(""))
	body := `{"input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]}`
	file := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options(f.srv.URL)
	o.InputFile = file
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.bodies) != 1 || !f.bodies[body] {
		t.Fatalf("bodies seen: %v", f.bodies)
	}
	if r.Settings.Bodies != 1 || r.Settings.BodyBytes != len(body) || r.Settings.InputFile != file || len(r.Model.Inputs) != 0 {
		t.Fatalf("settings = %+v, inputs %+v", r.Settings, r.Model.Inputs)
	}

	if err := os.WriteFile(file, []byte(`[1, 2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bench.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("array body: err = %v", err)
	}
}

// TestRunContentType: --input with --content-type posts the file as it is
// with that media type, and the in-process modes say why they did not run.
func TestRunContentType(t *testing.T) {
	f := newFakeServer(t, classifierInfo(""))
	body := "\x89PNG\r\n\x1a\nnot really"
	file := filepath.Join(t.TempDir(), "line.png")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ct string
		raw      bench.RawMode
		wantErr  string
	}{
		{"picture", "image/png", bench.RawAuto, ""},
		{"picture with --raw", "image/png", bench.RawOn, "decode JSON bodies only"},
		{"not JSON as JSON", "application/json", bench.RawAuto, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := options(f.srv.URL)
			o.InputFile, o.ContentType, o.Raw = file, c.ct, c.raw
			r, err := bench.Run(context.Background(), o)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !f.bodies["image/png "+body] || r.Settings.ContentType != "image/png" || r.Settings.BodyBytes != len(body) {
				t.Fatalf("bodies seen %v, settings %+v", f.bodies, r.Settings)
			}
			if !strings.Contains(r.RawSkipped, "JSON bodies only") {
				t.Errorf("raw skipped: %q", r.RawSkipped)
			}
		})
	}
	o := options(f.srv.URL)
	o.ContentType = "image/png"
	if _, err := bench.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "give --input") {
		t.Errorf("--content-type without --input: err = %v", err)
	}
}

// TestRunRefusesRemoteWithoutConnecting: a remote URL is refused by the
// options' validation, before anything is dialled: the error is ErrRemote,
// where a connection to 192.0.2.10 (TEST-NET-1, which nobody serves) would
// have failed with a network error or timed out.
func TestRunRefusesRemoteWithoutConnecting(t *testing.T) {
	o := options("http://192.0.2.10:8080")
	_, err := bench.Run(context.Background(), o)
	if !errors.Is(err, bench.ErrRemote) {
		t.Fatalf("err = %v, want ErrRemote", err)
	}
}

// TestRunStopsOnCancel cancels the run while the server answers the first
// request of the first level (the one after the probe of the one body).
func TestRunStopsOnCancel(t *testing.T) {
	f := newFakeServer(t, classifierInfo(""))
	o := options(f.srv.URL)
	o.Requests, o.Duration, o.Warmup, o.Concurrency, o.Bodies = 0, time.Minute, 0, []int{2, 4}, 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.fail = func(n int64) (int, string) {
		if n == 2 {
			cancel()
		}
		return 0, ""
	}
	r, err := bench.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Served) != 1 || !r.Served[0].Interrupted || r.Served[0].Errors != 0 {
		t.Fatalf("served = %+v, want one interrupted level without errors", r.Served)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "cut short") {
		t.Fatalf("notes = %v", r.Notes)
	}
}
