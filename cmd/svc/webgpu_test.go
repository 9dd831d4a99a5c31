package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// webgpuBuild is svc built with -tags webgpu.
var webgpuBuild binaryBuild

// webgpuBin builds (once) the svc binary with the webgpu provider compiled
// in, with the same flags as the harness's binary.
func webgpuBin(t *testing.T) string {
	t.Helper()
	skipShort(t, "builds svc again, with -tags webgpu")
	return webgpuBuild.get(t, "svc-webgpu", func(out string) []string { return buildArgs(out, "-tags", "webgpu") })
}

// swiftShader returns the environment that points the Vulkan loader at the
// SwiftShader driver build/fetch-vulkan.sh unpacks into build/vulkan (its
// own loader and ICD; nothing system-wide), with icd as VK_ICD_FILENAMES
// ("" = SwiftShader's).
func swiftShader(t *testing.T, icd string) []string {
	t.Helper()
	skipShort(t, "needs SwiftShader (make vulkan)")
	dir := filepath.Join(repoRoot, "build", "vulkan")
	if icd == "" {
		icd = filepath.Join(dir, "vk_swiftshader_icd.json")
	}
	if _, err := os.Stat(filepath.Join(dir, "libvk_swiftshader.so")); err != nil {
		t.Fatalf("no SwiftShader in %s: run 'make vulkan' (bash build/fetch-vulkan.sh)", dir)
	}
	ld := dir
	if prev := os.Getenv("LD_LIBRARY_PATH"); prev != "" {
		ld += ":" + prev
	}
	return []string{"VK_ICD_FILENAMES=" + icd, "LD_LIBRARY_PATH=" + ld}
}

// profileEvent is one event of ONNX Runtime's profiling JSON (Chrome trace
// format); kernel events are named <node>_kernel_time and carry the
// provider that ran the node.
type profileEvent struct {
	Cat  string `json:"cat"`
	Name string `json:"name"`
	Dur  int64  `json:"dur"`
	Args struct {
		Provider string `json:"provider"`
		OpName   string `json:"op_name"`
	} `json:"args"`
}

// placement is what the profile says ran where.
type placement struct {
	nodes   map[string]map[string]bool // provider → node names
	kernels map[string]int             // provider → kernel events
	micros  map[string]int64           // provider → kernel time
}

// readProfiles reads every profile JSON file written under prefix.
func readProfiles(t *testing.T, prefix string) placement {
	t.Helper()
	files, err := filepath.Glob(prefix + "*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no profile %s*.json (%v)", prefix, err)
	}
	p := placement{nodes: map[string]map[string]bool{}, kernels: map[string]int{}, micros: map[string]int64{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var events []profileEvent
		if err := json.Unmarshal(b, &events); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range events {
			if e.Cat != "Node" || !strings.HasSuffix(e.Name, "_kernel_time") || e.Args.Provider == "" {
				continue
			}
			if p.nodes[e.Args.Provider] == nil {
				p.nodes[e.Args.Provider] = map[string]bool{}
			}
			p.nodes[e.Args.Provider][strings.TrimSuffix(e.Name, "_kernel_time")] = true
			p.kernels[e.Args.Provider]++
			p.micros[e.Args.Provider] += e.Dur
		}
	}
	return p
}

// slowClient waits for answers that compile shaders on a software GPU.
var slowClient = &http.Client{Timeout: 4 * time.Minute}

// slowPredict posts body to /predict with slowClient.
func slowPredict(t *testing.T, s *server, body string) (int, []byte) {
	t.Helper()
	resp, err := slowClient.Post(s.URL+"/predict", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST /predict: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, b
}

// numbers flattens a /predict answer's outputs into one list per output.
func numbers(t *testing.T, body []byte) map[string][]float64 {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("answer is not JSON: %v\n%.300s", err, body)
	}
	flat := map[string][]float64{}
	var walk func(name string, v any)
	walk = func(name string, v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(name, e)
			}
		case float64:
			flat[name] = append(flat[name], x)
		default:
			t.Fatalf("output %s holds %T", name, v)
		}
	}
	for name, v := range out {
		walk(name, v)
	}
	return flat
}

// maxDiff is the largest absolute difference between two answers with the
// same outputs and shapes.
func maxDiff(t *testing.T, a, b map[string][]float64) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("outputs differ: %d vs %d", len(a), len(b))
	}
	d := 0.0
	for name, xs := range a {
		ys := b[name]
		if len(xs) != len(ys) || len(xs) == 0 {
			t.Fatalf("output %s: %d vs %d values", name, len(xs), len(ys))
		}
		for i := range xs {
			d = math.Max(d, math.Abs(xs[i]-ys[i]))
		}
	}
	return d
}

// With a software Vulkan driver (SwiftShader, fetched by build/fetch-vulkan.sh)
// --provider webgpu really runs PaddleOCR on ONNX Runtime's WebGPU provider:
// /metrics names it, the answers match a CPU server's within 1e-4, and
// ONNX Runtime's own profile shows most nodes ran on WebGPU. The shaders
// compile during the warm-up inference, before the banner.
func TestWebGPURunsPaddleOCR(t *testing.T) {
	t.Parallel()
	bin := webgpuBin(t)
	env := swiftShader(t, "")
	tests := []struct {
		model string
		input string
	}{
		{"paddleocr-cls", `{"x": ` + image(1, 48, 192, textLine) + `}`},
		{"paddleocr-det", `{"x": ` + image(1, 64, 192, textLine) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			// Side by side: each is most of a minute of SwiftShader
			// compiling shaders and running them, a test's longest part.
			t.Parallel()
			file := thirdParty(t, tt.model)
			dir := t.TempDir()
			prefix := filepath.Join(dir, "ort")
			cfg := filepath.Join(dir, "svc.yml")
			if err := os.WriteFile(cfg, []byte("runtime:\n  profile: "+prefix+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}

			started := time.Now()
			s := startServerWithin(t, 4*time.Minute, bin, env, file, "--provider", "webgpu", "--config", cfg)
			ready := time.Since(started)
			if m := providerLine.FindStringSubmatch(s.stdout.String()); m == nil || strings.TrimSpace(m[1]) != "WebGpuExecutionProvider" {
				t.Fatalf("banner provider line = %q, want WebGpuExecutionProvider\n%s\n%s", m, s.stdout, s.stderr)
			}
			if w := warnings(s); len(w) != 0 {
				t.Errorf("warnings: %v", w)
			}
			if got := getMetrics(t, s); got.Provider.Name != "WebGpuExecutionProvider" || !got.Provider.Available || !contains(got.CompiledProviders, "webgpu") {
				t.Errorf("/metrics provider = %+v, compiled %v", got.Provider, got.CompiledProviders)
			} else if strings.Join(got.AvailableProviders, ",") != "WebGpuExecutionProvider,CPUExecutionProvider" {
				t.Errorf("available_providers = %q, want WebGPU (a Vulkan adapter is there) and the CPU", got.AvailableProviders)
			}

			// The warm-up ran with every dynamic dimension 1: the first
			// request's shapes compile their own shaders.
			var gpu []byte
			var runs []time.Duration
			for range 2 {
				t0 := time.Now()
				status, body := slowPredict(t, s, tt.input)
				runs = append(runs, time.Since(t0).Round(time.Millisecond))
				if status != 200 {
					t.Fatalf("predict on WebGPU: %d %s", status, body)
				}
				gpu = body
			}

			cpu := startServer(t, file, "--provider", "cpu")
			rc := cpu.predict(tt.input)
			if rc.Status != 200 {
				t.Fatalf("predict on CPU: %d %s", rc.Status, rc.Body)
			}
			diff := maxDiff(t, numbers(t, gpu), numbers(t, rc.Body))
			if diff > 1e-4 {
				t.Errorf("WebGPU and CPU answers differ by %g (> 1e-4)", diff)
			}

			// The profile is written when the session is destroyed.
			if code := s.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("exit code %d\n%s", code, s.stderr)
			}
			p := readProfiles(t, prefix)
			gpuNodes, cpuNodes := len(p.nodes["WebGpuExecutionProvider"]), len(p.nodes["CPUExecutionProvider"])
			var others []string
			for prov := range p.nodes {
				if prov != "WebGpuExecutionProvider" && prov != "CPUExecutionProvider" {
					others = append(others, prov)
				}
			}
			sort.Strings(others)
			if len(others) > 0 {
				t.Errorf("nodes ran on %v too", others)
			}
			if gpuNodes == 0 || gpuNodes < 3*cpuNodes {
				t.Errorf("nodes on WebGPU %d, on CPU %d: want most on WebGPU", gpuNodes, cpuNodes)
			}
			// The banner's placement (from svc's own profiled probe at
			// start-up) is what the served session's profile shows.
			wantNodes := fmt.Sprintf("WebGpuExecutionProvider %d", gpuNodes)
			if cpuNodes > 0 {
				wantNodes += fmt.Sprintf(", CPUExecutionProvider %d", cpuNodes)
			}
			if m := nodesLine.FindStringSubmatch(s.stdout.String()); m == nil || m[1] != wantNodes {
				t.Errorf("banner nodes line %q, want %q", m, wantNodes)
			}
			var cpuOps []string
			for n := range p.nodes["CPUExecutionProvider"] {
				cpuOps = append(cpuOps, n)
			}
			sort.Strings(cpuOps)
			t.Logf("%s: ready (load, warm-up incl. shader compilation) %v; runs %v; max |WebGPU-CPU| %.2g", tt.model, ready.Round(time.Millisecond), runs, diff)
			t.Logf("%s: nodes on WebGPU %d (%d kernel events, %.1f ms), on CPU %d (%d kernel events, %.1f ms): %s",
				tt.model, gpuNodes, p.kernels["WebGpuExecutionProvider"], float64(p.micros["WebGpuExecutionProvider"])/1e3,
				cpuNodes, p.kernels["CPUExecutionProvider"], float64(p.micros["CPUExecutionProvider"])/1e3, strings.Join(cpuOps, " "))
		})
	}
}

// Without a WebGPU adapter (the Vulkan loader finds no driver) --provider
// webgpu falls back to CPU: one warning with ONNX Runtime's reason and a
// hint, the fallback in the banner, and the model still serves.
func TestWebGPUWithoutAdapterFallsBackToCPU(t *testing.T) {
	t.Parallel()
	s := startServerBin(t, webgpuBin(t), swiftShader(t, "/nonexistent.json"), model("classifier.onnx"), "--provider", "webgpu")

	m := providerLine.FindStringSubmatch(s.stdout.String())
	if m == nil || strings.TrimSpace(m[1]) != "CPUExecutionProvider (fallback: webgpu not usable)" {
		t.Errorf("banner provider line = %q, want CPUExecutionProvider with the webgpu fallback\n%s", m, s.stdout)
	}
	warns := warnings(s)
	if len(warns) != 1 {
		t.Fatalf("want one warning, got %d\n%s", len(warns), s.stderr)
	}
	const want = "Failed to get a WebGPU adapter: No supported adapters (no usable Vulkan driver: install one, e.g. mesa-vulkan-drivers 25 or newer, or point VK_ICD_FILENAMES at one)"
	if w := warns[0]; w["requested"] != "webgpu" || w["fallback"] != "cpu" || w["reason"] != want {
		t.Errorf("warning = %v, want requested webgpu, fallback cpu, reason %q", w, want)
	}
	// Without an adapter WebGPU is not usable here: available_providers
	// leaves it out; the library was built with it (runtime_providers).
	if got := getMetrics(t, s); got.Provider.Name != "CPUExecutionProvider" || strings.Join(got.AvailableProviders, ",") != "CPUExecutionProvider" ||
		!contains(got.RuntimeProviders, "WebGpuExecutionProvider") {
		t.Errorf("/metrics provider = %+v, available %v, runtime %v", got.Provider, got.AvailableProviders, got.RuntimeProviders)
	}
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != 200 || !strings.Contains(string(r.Body), `"label":[0]`) {
		t.Errorf("/predict on the fallback: %d %s", r.Status, r.Body)
	}
}
