package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vadSample is an inference request for Silero VAD v5 (512 samples, the
// rate, a zero state): a warm-up its made-up inputs of ones cannot be
// (one sample cannot be reflect-padded).
func vadSample(t *testing.T, input string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"inputs": []map[string]any{
		{"name": input, "datatype": "FP32", "shape": []int{1, vadChunk}, "data": make([]float32, vadChunk)},
		{"name": "sr", "datatype": "INT64", "shape": []int{}, "data": []int64{vadRate}},
		{"name": "state", "datatype": "FP32", "shape": []int{2, 1, 128}, "data": make([]float32, 2*128)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sampleConfig writes svc.yml serving Silero VAD as "vad" with
// models.vad.warmup naming a file that holds body ("" : no file).
func sampleConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if body != "" {
		if err := os.WriteFile(filepath.Join(dir, "warmup.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "svc.yml")
	yml := fmt.Sprintf("models:\n  vad:\n    path: %s\n    warmup: warmup.json\n", vadModel(t))
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestWarmUpSample: svc.yml's models.NAME.warmup runs the sample, a v2
// inference request, as the warm-up inference at start and at each
// reload, where inputs of ones fail; a sample that does not fit the model
// is reported by the warm-up warning, naming what is wrong; a sample svc
// cannot read stops the start with a clear message.
func TestWarmUpSample(t *testing.T) {
	t.Parallel()
	skipShort(t, "Silero VAD served with warm-up samples")
	t.Run("ones fail, the sample runs", func(t *testing.T) {
		plain := startServer(t, vadModel(t))
		if n := len(plain.logRecords("warm-up inference failed; the model serves anyway")); n != 1 {
			t.Fatalf("without a sample: %d warm-up failures logged, want 1 (ones cannot run Silero VAD)\n%s", n, plain.stderr)
		}
		s := startServer(t, "vad", "--config", sampleConfig(t, vadSample(t, "input")))
		if recs := s.logRecords("warm-up inference failed; the model serves anyway"); len(recs) != 0 {
			t.Fatalf("with a sample: the warm-up failed: %v", recs)
		}
		// A reload warms up from the sample too: a failure would fail it
		// now that the serving model warmed up well.
		if r := s.do(http.MethodPost, "/v2/repository/models/vad/load", "", nil); r.Status != http.StatusOK {
			t.Fatalf("reload: %d %s", r.Status, r.Body)
		}
	})
	t.Run("a sample that does not fit", func(t *testing.T) {
		s := startServer(t, "vad", "--config", sampleConfig(t, vadSample(t, "audio")))
		recs := s.logRecords("warm-up inference failed; the model serves anyway")
		if len(recs) != 1 || !strings.Contains(fmt.Sprint(recs[0]["error"]), "warm-up sample:") || !strings.Contains(fmt.Sprint(recs[0]["error"]), "audio") {
			t.Fatalf("warm-up warnings %v; want one naming the sample and its input 'audio'", recs)
		}
		if r := s.get("/v2/health/ready"); r.Status != http.StatusOK {
			t.Fatalf("ready: %d", r.Status)
		}
	})
	for _, tt := range []struct{ name, body, want string }{
		{"no file", "", "warm-up sample: open"},
		{"not JSON", "inputs: x", "not an inference request"},
		{"no inputs", `{"inputs": []}`, "no inputs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runSvc(t, nil, "serve", "vad", "--config", sampleConfig(t, tt.body), "--port", "0")
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want a failure saying %q", code, stderr, tt.want)
			}
		})
	}
}
