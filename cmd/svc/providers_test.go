package main_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cudaBuild is svc built with -tags cuda.
var cudaBuild binaryBuild

// cudaBin builds (once) the svc binary with the cuda provider compiled in,
// with the same flags as the harness's binary so the build cache is shared.
func cudaBin(t *testing.T) string {
	t.Helper()
	skipShort(t, "builds svc again, with -tags cuda")
	return cudaBuild.get(t, "svc-cuda", func(out string) []string { return buildArgs(out, "-tags", "cuda") })
}

// cmdFor prepares a command of another svc binary, with the harness's
// environment (the test library, JSON logs).
func cmdFor(t *testing.T, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := svcCmd(t, env, args...)
	cmd.Path = bin
	cmd.Args[0] = bin
	return cmd
}

// serveWith starts 'bin serve' on a free local port and waits for the
// banner.
func serveWith(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	return startServerBin(t, bin, nil, args...)
}

// metricsRecord is GET /metrics.
type metricsRecord struct {
	Provider struct {
		Name        string `json:"name"`
		Available   bool   `json:"available"`
		Platform    string `json:"platform"`
		Description string `json:"description"`
	} `json:"provider"`
	AvailableProviders []string `json:"available_providers"`
	CompiledProviders  []string `json:"compiled_providers"`
	RuntimeProviders   []string `json:"runtime_providers"`
}

func getMetrics(t *testing.T, s *server) metricsRecord {
	t.Helper()
	r := s.get("/metrics")
	if r.Status != 200 {
		t.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	var m metricsRecord
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("/metrics: %v\n%s", err, r.Body)
	}
	return m
}

// warnings returns the server's warning log records.
func warnings(s *server) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["level"] == "warn" {
			out = append(out, m)
		}
	}
	return out
}

var providerLine = regexp.MustCompile(`(?m)^\s+provider\s+(.*)$`)

// In a cuda build on a machine without a usable CUDA (no NVIDIA driver, and
// the npm library without libonnxruntime_providers_cuda.so), --provider cuda
// warns, falls back to CPU and says so in the banner and /metrics.
func TestCUDABuildFallsBackToCPU(t *testing.T) {
	t.Parallel()
	bin := cudaBin(t)
	s := serveWith(t, bin, model("classifier.onnx"), "--provider", "cuda")

	m := providerLine.FindStringSubmatch(s.stdout.String())
	if m == nil || !strings.HasPrefix(m[1], "CPUExecutionProvider (fallback: cuda not usable") {
		t.Errorf("banner provider line = %q, want CPUExecutionProvider with the cuda fallback\n%s", m, s.stdout)
	}
	warns := warnings(s)
	if len(warns) != 1 {
		t.Fatalf("want one warning, got %d\n%s", len(warns), s.stderr)
	}
	w := warns[0]
	reason, _ := w["reason"].(string)
	if w["requested"] != "cuda" || w["fallback"] != "cpu" || !strings.Contains(reason, "libonnxruntime_providers_shared.so is not beside the ONNX Runtime library") {
		t.Errorf("warning = %v, want requested cuda, fallback cpu and the missing provider library", w)
	}

	got := getMetrics(t, s)
	if got.Provider.Name != "CPUExecutionProvider" || got.Provider.Platform != "CPU" || !got.Provider.Available {
		t.Errorf("/metrics provider = %+v, want the CPU provider actually in use", got.Provider)
	}
	if strings.Join(got.CompiledProviders, ",") != "cpu,cuda" {
		t.Errorf("compiled_providers = %v, want [cpu cuda]", got.CompiledProviders)
	}
	if strings.Join(got.AvailableProviders, ",") != "CPUExecutionProvider" {
		t.Errorf("available_providers = %v, want the CPU alone: CUDA cannot run here", got.AvailableProviders)
	}
	if !contains(got.RuntimeProviders, "CUDAExecutionProvider") || !contains(got.RuntimeProviders, "CPUExecutionProvider") {
		t.Errorf("runtime_providers = %v, want the library's own list", got.RuntimeProviders)
	}

	r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"label":[0]`) {
		t.Errorf("/predict on the fallback: %d %s", r.Status, r.Body)
	}
}

// With no --provider, a cuda build picks the best usable provider (CPU
// here) without a warning or a fallback note.
func TestCUDABuildAutomaticSelection(t *testing.T) {
	t.Parallel()
	s := serveWith(t, cudaBin(t), model("classifier.onnx"))
	m := providerLine.FindStringSubmatch(s.stdout.String())
	if m == nil || strings.TrimSpace(m[1]) != "CPUExecutionProvider" {
		t.Errorf("banner provider line = %q, want CPUExecutionProvider alone", m)
	}
	if w := warnings(s); len(w) != 0 {
		t.Errorf("automatic selection warned: %v", w)
	}
	if got := getMetrics(t, s); got.Provider.Name != "CPUExecutionProvider" {
		t.Errorf("/metrics provider = %+v", got.Provider)
	}
}

// A provider valid but not compiled in is a one-line start-up failure that
// names the build tag; a value outside the list is a usage error.
func TestProviderNotCompiledIn(t *testing.T) {
	t.Parallel()
	sequential(t)
	tests := []struct {
		give     string
		wantCode int
		want     string
	}{
		{"tensorrt", 1, `svc: error: provider "tensorrt" is not compiled into this binary; rebuild with: go build -tags tensorrt ./cmd/svc`},
		{"cuda", 1, `svc: error: provider "cuda" is not compiled into this binary; rebuild with: go build -tags cuda ./cmd/svc`},
		{"coreml", 1, `svc: error: provider "coreml" is not compiled into this binary; rebuild with: go build -tags coreml ./cmd/svc (on macOS)`},
		{"gpu", 2, `svc: error: invalid --provider "gpu": allowed values are cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu`},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			code, stdout, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--host", "127.0.0.1", "--port", "0", "--provider", tt.give)
			if code != tt.wantCode || strings.TrimSpace(stderr) != tt.want || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d and %q", code, stderr, stdout, tt.wantCode, tt.want)
			}
		})
	}
}

// row finds a provider's row in the 'svc providers' table.
func row(t *testing.T, table, name string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	t.Fatalf("no row for %s in\n%s", name, table)
	return nil
}

func TestProvidersCommand(t *testing.T) {
	t.Parallel()
	sequential(t)
	t.Run("plain build", func(t *testing.T) {
		code, stdout, stderr := runSvc(t, nil, "providers")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "PROVIDER  ONNX RUNTIME NAME") || !strings.Contains(stdout, "COMPILED IN  OFFERED BY LIBRARY  USABLE NOW  WHY NOT") {
			t.Errorf("no table header:\n%s", stdout)
		}
		if got := strings.Join(row(t, stdout, "cpu"), " "); got != "cpu CPUExecutionProvider yes yes yes -" {
			t.Errorf("cpu row = %q", got)
		}
		if got := strings.Join(row(t, stdout, "cuda"), " "); got != "cuda CUDAExecutionProvider no yes no not compiled in; rebuild with: go build -tags cuda ./cmd/svc" {
			t.Errorf("cuda row = %q", got)
		}
		if got := strings.Join(row(t, stdout, "openvino")[:5], " "); got != "openvino OpenVINOExecutionProvider no no no" {
			t.Errorf("openvino row = %q", got)
		}
		for _, want := range []string{"ONNX Runtime 1.29.0 (" + ortLib + ")", "library offers: TensorrtExecutionProvider, CUDAExecutionProvider", "automatic choice: cpu (CPUExecutionProvider)"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, stdout)
			}
		}
	})
	t.Run("cuda build", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, cmdFor(t, cudaBin(t), nil, "providers"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		cuda := row(t, stdout, "cuda")
		why := strings.Join(cuda[5:], " ")
		if strings.Join(cuda[:5], " ") != "cuda CUDAExecutionProvider yes yes no" || !strings.Contains(why, "libonnxruntime_providers_shared.so is not beside") {
			t.Errorf("cuda row = %q: want compiled in, offered, not usable, and why", strings.Join(cuda, " "))
		}
		if got := strings.Join(row(t, stdout, "tensorrt")[:5], " "); got != "tensorrt TensorrtExecutionProvider no yes no" {
			t.Errorf("tensorrt row = %q", got)
		}
		code, stdout, _ = runCmd(t, cmdFor(t, cudaBin(t), nil, "version"))
		if code != 0 || !strings.Contains(stdout, "providers compiled in: cpu, cuda") {
			t.Errorf("version of the cuda build: %d\n%s", code, stdout)
		}
	})
	t.Run("tags for scripts", func(t *testing.T) {
		code, stdout, stderr := runSvc(t, nil, "providers", "--tags")
		want := "cuda any\ncoreml darwin\nrocm any\ndirectml windows\nopenvino any\ntensorrt any\nwebgpu any\n"
		if code != 0 || stdout != want {
			t.Errorf("providers --tags: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
		}
		_, help, _ := runSvc(t, nil, "providers", "--help")
		if strings.Contains(help, "--tags") {
			t.Errorf("--tags is in the help; it is for scripts:\n%s", help)
		}
	})
	t.Run("no library", func(t *testing.T) {
		code, stdout, stderr := runSvc(t, []string{"ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so"}, "providers")
		if code != 1 || !strings.HasPrefix(stderr, "svc: error: ONNX Runtime library not found") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if got := strings.Join(row(t, stdout, "cpu"), " "); got != "cpu CPUExecutionProvider yes unknown no ONNX Runtime library not loaded" {
			t.Errorf("cpu row without a library = %q", got)
		}
	})
}

// /metrics is honest on a machine without GPU libraries: available_providers
// holds the providers compiled in and usable here, which is the CPU alone
// whatever the build and whichever library, while runtime_providers keeps
// what the ONNX Runtime library was built with (its GetAvailableProviders
// names CUDA and TensorRT even here).
func TestMetricsAvailableProvidersHonest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		bin          func(t *testing.T) string
		env          func(t *testing.T) []string
		args         []string
		wantCompiled string
	}{
		{"plain build", func(*testing.T) string { return svcBin }, func(*testing.T) []string { return nil }, nil, "cpu"},
		{"cuda build, no provider libraries", cudaBin, func(*testing.T) []string { return nil }, nil, "cpu,cuda"},
		{
			"cuda build, the real CUDA provider libraries, no CUDA, --provider cuda", cudaBin,
			func(t *testing.T) []string {
				return []string{"ONNXRUNTIME_LIB=" + filepath.Join(cudaLibDir(t), "libonnxruntime.so.1"), "LD_LIBRARY_PATH="}
			},
			[]string{"--provider", "cuda"}, "cpu,cuda",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, env := tt.bin(t), tt.env(t)
			s := startServerBin(t, bin, env, append([]string{model("classifier.onnx")}, tt.args...)...)
			got := getMetrics(t, s)
			if strings.Join(got.AvailableProviders, ",") != "CPUExecutionProvider" {
				t.Errorf("available_providers = %q, want [CPUExecutionProvider]: nothing else can run here", got.AvailableProviders)
			}
			if strings.Join(got.CompiledProviders, ",") != tt.wantCompiled {
				t.Errorf("compiled_providers = %q, want %s", got.CompiledProviders, tt.wantCompiled)
			}
			for _, p := range []string{"CUDAExecutionProvider", "TensorrtExecutionProvider", "CPUExecutionProvider"} {
				if !contains(got.RuntimeProviders, p) {
					t.Errorf("runtime_providers = %q, want the library's list with %s", got.RuntimeProviders, p)
				}
			}
		})
	}
}
