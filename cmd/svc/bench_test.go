package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// benchReport is the part of svc bench --json the tests check.
type benchReport struct {
	Schema int `json:"schema"`
	Model  struct {
		Name   string `json:"name"`
		Inputs []struct {
			Name  string  `json:"name"`
			Shape []int64 `json:"shape"`
		} `json:"inputs"`
	} `json:"model"`
	Target struct {
		URL           string   `json:"url"`
		StartedServer bool     `json:"started_server"`
		ServeArgs     []string `json:"serve_args"`
		Provider      string   `json:"provider"`
		RawProvider   string   `json:"raw_provider"`
	} `json:"target"`
	Served     []benchLevel `json:"served"`
	Raw        []benchLevel `json:"raw"`
	RawCodec   []benchLevel `json:"raw_codec"`
	RawSkipped string       `json:"raw_skipped"`
	Ratios     []struct {
		Concurrency             int      `json:"concurrency"`
		ThroughputServedOverRaw *float64 `json:"throughput_served_over_raw"`
		P50ServedMinusRawUS     *float64 `json:"p50_served_minus_raw_us"`
	} `json:"ratios"`
	Notes []string `json:"notes"`
}

type benchLevel struct {
	Concurrency   int              `json:"concurrency"`
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	ThroughputRPS float64          `json:"throughput_rps"`
	StatusCodes   map[string]int64 `json:"status_codes"`
	LatencyUS     struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latency_us"`
	FirstError string `json:"first_error"`
}

func decodeBench(t *testing.T, stdout string) benchReport {
	t.Helper()
	var r benchReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("svc bench --json printed no JSON document: %v\n%s", err, stdout)
	}
	if r.Schema != 1 {
		t.Fatalf("schema = %d, want 1", r.Schema)
	}
	return r
}

// checkLevels checks one mode's levels: the given concurrencies, each with
// requests requests, no errors and some throughput.
func checkLevels(t *testing.T, mode string, levels []benchLevel, requests int64, concurrency ...int) {
	t.Helper()
	if len(levels) != len(concurrency) {
		t.Fatalf("%s: %d levels, want %v", mode, len(levels), concurrency)
	}
	for i, l := range levels {
		if l.Concurrency != concurrency[i] || l.Requests != requests || l.Errors != 0 || l.ThroughputRPS <= 0 || l.LatencyUS.P50 <= 0 || l.LatencyUS.P99 < l.LatencyUS.P50 {
			t.Fatalf("%s level %d = %+v; want concurrency %d, %d requests, no errors", mode, i, l, concurrency[i], requests)
		}
	}
}

func TestBenchStartsItsServer(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runSvc(t, nil, "bench", model("classifier.onnx"),
		"--concurrency", "1,2", "--requests", "50", "--warmup", "100ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	r := decodeBench(t, stdout)
	checkLevels(t, "served", r.Served, 50, 1, 2)
	for _, l := range r.Served {
		if l.StatusCodes["200"] != 50 {
			t.Fatalf("served status codes = %v", l.StatusCodes)
		}
	}
	checkLevels(t, "raw", r.Raw, 50, 1, 2)
	checkLevels(t, "raw_codec", r.RawCodec, 50, 1, 2)
	if len(r.Ratios) != 2 || r.Ratios[0].ThroughputServedOverRaw == nil || r.Ratios[0].P50ServedMinusRawUS == nil {
		t.Fatalf("ratios = %+v", r.Ratios)
	}
	if !r.Target.StartedServer || !strings.HasPrefix(r.Target.URL, "http://127.0.0.1:") || r.Target.Provider != "CPUExecutionProvider" || r.Target.RawProvider != "CPUExecutionProvider" {
		t.Fatalf("target = %+v", r.Target)
	}
	if r.Model.Name != "classifier" || len(r.Model.Inputs) != 1 || r.Model.Inputs[0].Name != "input" || len(r.Model.Inputs[0].Shape) != 2 || r.Model.Inputs[0].Shape[0] != 1 || r.Model.Inputs[0].Shape[1] != 4 {
		t.Fatalf("model = %+v", r.Model)
	}
	// The server svc bench started is gone.
	c := &http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get(r.Target.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Fatalf("the server at %s still answers after svc bench exited", r.Target.URL)
	}
	if !strings.Contains(stderr, "svc bench: raw+codec  concurrency 2") {
		t.Fatalf("no progress on stderr:\n%s", stderr)
	}
}

func TestBenchAgainstURL(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	code, stdout, stderr := runSvc(t, nil, "bench", "--url", s.URL,
		"--concurrency", "1,2", "--requests", "50", "--warmup", "0s", "--batch", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	r := decodeBench(t, stdout)
	checkLevels(t, "served", r.Served, 50, 1, 2)
	// The model file is on this machine: the in-process modes run too.
	checkLevels(t, "raw", r.Raw, 50, 1, 2)
	checkLevels(t, "raw_codec", r.RawCodec, 50, 1, 2)
	if r.Target.StartedServer || r.Target.URL != s.URL || r.Model.Inputs[0].Shape[0] != 3 {
		t.Fatalf("target = %+v, inputs %+v", r.Target, r.Model.Inputs)
	}
	// The server saw the load: probe bodies plus 2 × 50 (logged a little
	// after the answers), and still runs.
	for _, rec := range s.waitLog("request", 100, func(rec map[string]any) bool { return rec["path"] == "/predict" }) {
		if rec["status"] != float64(200) {
			t.Fatalf("a /predict answered %v: %v", rec["status"], rec)
		}
	}
	if r := s.get("/health"); r.Status != 200 {
		t.Fatalf("health after the run: %d", r.Status)
	}

	// Table output, served only.
	code, stdout, stderr = runSvc(t, nil, "bench", "--url", s.URL, "--concurrency", "2", "--requests", "20", "--warmup", "0s", "--no-raw")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"svc bench: classifier (version 3) at " + s.URL,
		"input: input float32 [1, 4]; 8 random bodies",
		"served: HTTP POST /predict",
		"concurrency  requests  throughput",
		"raw, raw+codec: not measured (--no-raw)",
		"the load generator runs on the same",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

// TestBenchProtocols: --protocol v2-json and v2-binary load the v2 infer
// path with the generated inputs, the in-process raw mode runs on the same
// inputs, and raw+codec (the /predict codec) does not.
func TestBenchProtocols(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ protocol, title string }{
		{"v2-json", "served: HTTP POST /v2/models/{name}/infer, JSON tensors (v2-json)"},
		{"v2-binary", "served: HTTP POST /v2/models/{name}/infer, binary tensors (v2-binary)"},
	} {
		t.Run(tt.protocol, func(t *testing.T) {
			s := startServer(t, model("classifier.onnx"))
			code, stdout, stderr := runSvc(t, nil, "bench", "--url", s.URL, "--protocol", tt.protocol,
				"--concurrency", "1,2", "--requests", "30", "--warmup", "0s", "--json")
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
			}
			r := decodeBench(t, stdout)
			checkLevels(t, "served", r.Served, 30, 1, 2)
			checkLevels(t, "raw", r.Raw, 30, 1, 2)
			if len(r.RawCodec) != 0 || len(r.Ratios) != 2 || r.Ratios[1].ThroughputServedOverRaw == nil {
				t.Fatalf("raw_codec %v, ratios %+v", r.RawCodec, r.Ratios)
			}
			var settings struct {
				Settings struct {
					Protocol string `json:"protocol"`
				} `json:"settings"`
			}
			if err := json.Unmarshal([]byte(stdout), &settings); err != nil || settings.Settings.Protocol != tt.protocol {
				t.Fatalf("settings = %+v (%v)", settings.Settings, err)
			}
			// The probe bodies and 2 × 30 measured requests, logged a little
			// after the answers.
			for _, rec := range s.waitLog("request", 60, func(rec map[string]any) bool { return rec["path"] == "/v2/models/classifier/infer" }) {
				if rec["status"] != float64(200) {
					t.Fatalf("an inference answered %v: %v", rec["status"], rec)
				}
			}
			code, stdout, stderr = runSvc(t, nil, "bench", "--url", s.URL, "--protocol", tt.protocol,
				"--concurrency", "1", "--requests", "5", "--warmup", "0s", "--no-raw")
			if code != 0 || !strings.Contains(stdout, tt.title) {
				t.Fatalf("exit %d; table lacks %q:\n%s\n%s", code, tt.title, stdout, stderr)
			}
		})
	}
}

// TestBenchGRPC: --protocol grpc loads ModelInfer, both on a server svc
// bench starts (it adds --grpc-port) and on a running one (--url with
// --grpc-address); every call the server logs succeeded.
func TestBenchGRPC(t *testing.T) {
	t.Parallel()
	const title = "served: gRPC inference.GRPCInferenceService/ModelInfer, raw tensors (grpc)"
	code, stdout, stderr := runSvc(t, nil, "bench", model("classifier.onnx"), "--protocol", "grpc",
		"--concurrency", "1,2", "--requests", "20", "--warmup", "0s", "--json")
	if code != 0 {
		t.Fatalf("started server: exit %d\nstderr:\n%s", code, stderr)
	}
	r := decodeBench(t, stdout)
	checkLevels(t, "served", r.Served, 20, 1, 2)
	checkLevels(t, "raw", r.Raw, 20, 1, 2)
	if len(r.RawCodec) != 0 {
		t.Fatalf("raw_codec ran for gRPC: %v", r.RawCodec)
	}

	port := freePort(t)
	s := startServer(t, model("classifier.onnx"), "--grpc-port", port)
	code, stdout, stderr = runSvc(t, nil, "bench", "--url", s.URL, "--grpc-address", "127.0.0.1:"+port,
		"--protocol", "grpc", "--concurrency", "2", "--requests", "25", "--warmup", "0s", "--no-raw")
	if code != 0 || !strings.Contains(stdout, title) {
		t.Fatalf("--url: exit %d; table lacks %q:\n%s\n%s", code, title, stdout, stderr)
	}
	// The probe (8 bodies) and 25 measured calls; the log is written in
	// batches a little after the answers.
	for _, rec := range s.waitLog("rpc", 25, func(rec map[string]any) bool {
		return rec["grpc_method"] == "/inference.GRPCInferenceService/ModelInfer"
	}) {
		if rec["code"] != "OK" {
			t.Fatalf("a ModelInfer call failed: %v", rec)
		}
	}
	// A --grpc-address where nothing serves gRPC fails before measuring,
	// naming the address.
	code, _, stderr = runSvc(t, nil, "bench", "--url", s.URL, "--grpc-address", "127.0.0.1:"+freePort(t),
		"--protocol", "grpc", "--concurrency", "1", "--requests", "5", "--warmup", "0s", "--no-raw", "--timeout", "5s")
	if code != 1 || !strings.Contains(stderr, "gRPC ModelInfer at 127.0.0.1:") || !strings.Contains(stderr, "is svc serving gRPC there?") {
		t.Fatalf("no gRPC server: exit %d\n%s", code, stderr)
	}
}

func TestBenchShapesAndServeFlags(t *testing.T) {
	t.Parallel()
	cls := thirdParty(t, "paddleocr-cls")
	code, stdout, stderr := runSvc(t, nil, "bench", cls, "--shape", "x=1,3,48,192",
		"--concurrency", "2", "--requests", "10", "--warmup", "0s", "--no-raw", "--json", "--", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	r := decodeBench(t, stdout)
	checkLevels(t, "served", r.Served, 10, 2)
	if got := r.Model.Inputs[0].Shape; len(got) != 4 || got[2] != 48 || got[3] != 192 {
		t.Fatalf("input shape = %v, want [1 3 48 192]", got)
	}
	if strings.Join(r.Target.ServeArgs, " ") != "--workers 2" || r.RawSkipped != "--no-raw" || len(r.Raw) != 0 {
		t.Fatalf("target = %+v, raw skipped %q", r.Target, r.RawSkipped)
	}
}

// TestBenchTextModel: svc bench gives a BERT-style model what it takes,
// a mask of ones and token types of zero beside random token ids: every
// request answered 200, with its raw modes too (random token types up to
// 9 were past the model's two and failed every request).
func TestBenchTextModel(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runSvc(t, nil, "bench", model("tiny_bert_classifier"), "--shape", "input_ids=1,12",
		"--shape", "attention_mask=1,12", "--shape", "token_type_ids=1,12",
		"--concurrency", "2", "--requests", "20", "--warmup", "0s", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	r := decodeBench(t, stdout)
	checkLevels(t, "served", r.Served, 20, 2)
	checkLevels(t, "raw", r.Raw, 20, 2)
	if r.Served[0].StatusCodes["200"] != 20 {
		t.Fatalf("served status codes = %v", r.Served[0].StatusCodes)
	}
}

func TestBenchRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"remote url", []string{"--url", "http://192.0.2.1:8080"}, 2, "not a loopback address; svc bench loads only servers on this machine unless --allow-remote"},
		{"no target", []string{"--requests", "5"}, 2, "give a MODEL_NAME to serve, or --url"},
		{"both targets", []string{model("classifier.onnx"), "--url", "http://127.0.0.1:1"}, 2, "not both"},
		{"bad concurrency", []string{model("classifier.onnx"), "--concurrency", "1,x"}, 2, "invalid --concurrency"},
		{"concurrency over the cap", []string{model("classifier.onnx"), "--concurrency", "4096"}, 2, "between 1 and 1024"},
		{"duration over the cap", []string{model("classifier.onnx"), "--duration", "1h"}, 2, "at most 10m0s per level"},
		{"requests over the cap", []string{model("classifier.onnx"), "--requests", "20000000"}, 2, "at most 10000000 per level"},
		{"bad shape", []string{model("classifier.onnx"), "--shape", "input"}, 2, "want NAME=D0,D1"},
		{"bench chooses the port", []string{model("classifier.onnx"), "--", "--port", "9000"}, 2, "svc bench chooses the host and port"},
		{"missing model", []string{"no-such-model.onnx", "--requests", "5"}, 1, "svc serve exited"},
		{"shape of an unknown input", []string{model("classifier.onnx"), "--shape", "x=1,4", "--requests", "5"}, 1, `--shape names "x", but the model's inputs are: 'input'`},
		{"no server", []string{"--url", "http://127.0.0.1:1", "--requests", "5"}, 1, "GET /info"},
		{"unknown protocol", []string{model("classifier.onnx"), "--protocol", "grpc-web"}, 2, `--protocol "grpc-web": want one of v1, v2-json, v2-binary, grpc`},
		{"grpc with url lacks address", []string{"--url", "http://127.0.0.1:1", "--protocol", "grpc"}, 2, "--protocol grpc with --url needs the server's gRPC address: --grpc-address HOST:PORT"},
		{"grpc address not loopback", []string{"--url", "http://127.0.0.1:1", "--protocol", "grpc", "--grpc-address", "10.1.2.3:9000"}, 2, `--grpc-address 10.1.2.3:9000: "10.1.2.3" is`},
		{"grpc address malformed", []string{"--url", "http://127.0.0.1:1", "--protocol", "grpc", "--grpc-address", "nowhere"}, 2, `invalid --grpc-address "nowhere": want HOST:PORT`},
		{"grpc address without grpc", []string{"--url", "http://127.0.0.1:1", "--grpc-address", "127.0.0.1:9000"}, 2, "--grpc-address applies to --protocol grpc with --url only"},
		{"input file with grpc", []string{model("classifier.onnx"), "--protocol", "grpc", "--input", "body.json"}, 2, "--input is a /predict body: it applies to --protocol v1 only"},
		{"input file with v2", []string{model("classifier.onnx"), "--protocol", "v2-binary", "--input", "body.json"}, 2, "--input is a /predict body: it applies to --protocol v1 only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runSvc(t, nil, append([]string{"bench"}, tt.args...)...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantStderr) || stdout != "" {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr (want %q):\n%s", code, tt.wantCode, stdout, tt.wantStderr, stderr)
			}
		})
	}
}
