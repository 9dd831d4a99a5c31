package main_test

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// iris holds the demo model's documented examples and their labels.
var iris = []struct {
	features []float64
	label    int
}{
	{[]float64{5.1, 3.5, 1.4, 0.2}, 0},
	{[]float64{5.9, 3.0, 4.2, 1.5}, 1},
	{[]float64{6.7, 3.0, 5.2, 2.3}, 2},
}

func TestDemoModelEndpoints(t *testing.T) {
	t.Parallel()
	sequential(t)
	s := startServer(t, filepath.Join(repoRoot, "examples", "demo"))

	t.Run("banner", func(t *testing.T) {
		out := s.stdout.String()
		for _, want := range []string{"name      demo", "version   3", "inputs    1", "outputs   2", "host      127.0.0.1", "workers   1", "POST  " + s.URL + "/predict", "GET   " + s.URL + "/openapi.json", "CPUExecutionProvider"} {
			if !strings.Contains(out, want) {
				t.Errorf("banner lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("health", func(t *testing.T) {
		r := s.get("/health")
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /health = %d %q", r.Status, r.Header.Get("Content-Type"))
		}
		if got := r.JSON(t); !reflect.DeepEqual(got, map[string]any{"status": "healthy", "model": "demo"}) {
			t.Fatalf("health = %v", got)
		}
	})

	t.Run("info", func(t *testing.T) {
		r := s.get("/info")
		if r.Status != 200 {
			t.Fatalf("GET /info = %d", r.Status)
		}
		var info struct {
			Name     string            `json:"name"`
			Version  string            `json:"version"`
			Format   string            `json:"format"`
			SizeMB   float64           `json:"size_mb"`
			Path     string            `json:"path"`
			Metadata map[string]string `json:"metadata"`
			Inputs   []struct {
				Name     string  `json:"name"`
				Type     string  `json:"type"`
				Shape    []int64 `json:"shape"`
				Required bool    `json:"required"`
			} `json:"inputs"`
			Outputs []struct {
				Name  string  `json:"name"`
				Type  string  `json:"type"`
				Shape []int64 `json:"shape"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal(r.Body, &info); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(filepath.Join(repoRoot, "examples", "demo", "model.onnx"))
		if info.Name != "demo" || info.Version != "3" || info.Format != "onnx" {
			t.Errorf("name/version/format = %q/%q/%q", info.Name, info.Version, info.Format)
		}
		if want := float64(st.Size()) / (1 << 20); math.Abs(info.SizeMB-want) > 0.001 {
			t.Errorf("size_mb = %v, want %v", info.SizeMB, want)
		}
		if !strings.HasSuffix(info.Path, filepath.Join("examples", "demo", "model.onnx")) {
			t.Errorf("path = %q", info.Path)
		}
		if info.Metadata["author"] != "svc tests" {
			t.Errorf("metadata = %v", info.Metadata)
		}
		if len(info.Inputs) != 1 || info.Inputs[0].Name != "input" || info.Inputs[0].Type != "float32" ||
			!reflect.DeepEqual(info.Inputs[0].Shape, []int64{-1, 4}) || !info.Inputs[0].Required {
			t.Errorf("inputs = %+v", info.Inputs)
		}
		if len(info.Outputs) != 2 || info.Outputs[0].Name != "probabilities" || info.Outputs[0].Type != "float32" ||
			!reflect.DeepEqual(info.Outputs[0].Shape, []int64{-1, 3}) || info.Outputs[1].Name != "label" || info.Outputs[1].Type != "int64" {
			t.Errorf("outputs = %+v", info.Outputs)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		r := s.get("/metrics")
		if r.Status != 200 {
			t.Fatalf("GET /metrics = %d", r.Status)
		}
		var m struct {
			Provider struct {
				Name        string `json:"name"`
				Available   bool   `json:"available"`
				Platform    string `json:"platform"`
				Description string `json:"description"`
			} `json:"provider"`
			AvailableProviders []string `json:"available_providers"`
			CompiledProviders  []string `json:"compiled_providers"`
		}
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		if m.Provider.Name != "CPUExecutionProvider" || !m.Provider.Available || m.Provider.Platform != "CPU" || m.Provider.Description == "" {
			t.Errorf("provider = %+v", m.Provider)
		}
		if !contains(m.AvailableProviders, "CPUExecutionProvider") {
			t.Errorf("available_providers = %v", m.AvailableProviders)
		}
		for _, p := range m.AvailableProviders {
			if !strings.HasSuffix(p, "ExecutionProvider") {
				t.Errorf("available provider %q does not end in ExecutionProvider", p)
			}
		}
		if !contains(m.CompiledProviders, "cpu") {
			t.Errorf("compiled_providers = %v", m.CompiledProviders)
		}
	})

	t.Run("predict batch", func(t *testing.T) {
		var rows [][]float64
		for _, ex := range iris {
			rows = append(rows, ex.features)
		}
		body, _ := json.Marshal(map[string]any{"input": rows})
		r := s.predict(string(body))
		if r.Status != 200 {
			t.Fatalf("predict = %d %s", r.Status, r.Body)
		}
		var out struct {
			Probabilities [][]float64 `json:"probabilities"`
			Label         []int       `json:"label"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Label) != 3 || len(out.Probabilities) != 3 {
			t.Fatalf("outputs: %s", r.Body)
		}
		for i, ex := range iris {
			if out.Label[i] != ex.label {
				t.Errorf("example %d: label %d, want %d", i, out.Label[i], ex.label)
			}
			sum := 0.0
			for _, p := range out.Probabilities[i] {
				sum += p
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("example %d: probabilities sum to %v", i, sum)
			}
		}
	})

	t.Run("predict single item is a batch of one", func(t *testing.T) {
		r := s.predict(`{"input": [6.7, 3.0, 5.2, 2.3]}`)
		if r.Status != 200 {
			t.Fatalf("predict = %d %s", r.Status, r.Body)
		}
		var out struct {
			Probabilities [][]float64 `json:"probabilities"`
			Label         []int       `json:"label"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out.Label, []int{2}) || len(out.Probabilities) != 1 || len(out.Probabilities[0]) != 3 {
			t.Fatalf("outputs: %s", r.Body)
		}
	})

	t.Run("request id", func(t *testing.T) {
		r := s.do(http.MethodGet, "/health", "", nil, "X-Request-ID", "trace-abc-123")
		if got := r.Header.Get("X-Request-ID"); got != "trace-abc-123" {
			t.Fatalf("X-Request-ID echoed as %q", got)
		}
		r = s.get("/health")
		generated := r.Header.Get("X-Request-ID")
		if len(generated) < 16 {
			t.Fatalf("generated X-Request-ID %q", generated)
		}
		// The access line is written as the handler returns, which may be
		// just after the client has its answer.
		s.waitLog("request", 2, func(rec map[string]any) bool {
			return rec["request_id"] == "trace-abc-123" || rec["request_id"] == generated
		})
		found := countIDs(s.accessLogs(), "trace-abc-123", generated)
		for _, rec := range s.accessLogs() {
			if rec["request_id"] == "trace-abc-123" || rec["request_id"] == generated {
				for _, k := range []string{"method", "path", "status", "duration"} {
					if _, ok := rec[k]; !ok {
						t.Errorf("access log lacks %q: %v", k, rec)
					}
				}
				if rec["path"] != "/health" || rec["method"] != "GET" || rec["status"] != float64(200) {
					t.Errorf("access log record %v", rec)
				}
			}
		}
		if found != 2 {
			t.Fatalf("found %d access log lines for the two requests\n%s", found, s.stderr)
		}
	})
}

func countIDs(records []map[string]any, ids ...string) int {
	n := 0
	for _, rec := range records {
		for _, id := range ids {
			if rec["request_id"] == id {
				n++
			}
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
