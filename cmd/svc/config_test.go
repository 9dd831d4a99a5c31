package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestInitWritesStarterConfig(t *testing.T) {
	t.Parallel()
	sequential(t)
	cmd := svcCmd(t, nil, "init")
	code, stdout, stderr := runCmd(t, cmd)
	if code != 0 || !strings.Contains(stdout, "wrote svc.yml") {
		t.Fatalf("init: %d %s %s", code, stdout, stderr)
	}
	body, err := os.ReadFile(filepath.Join(cmd.Dir, "svc.yml"))
	if err != nil || !strings.Contains(string(body), "memory_limit") {
		t.Fatalf("starter file: %v\n%s", err, body)
	}
	// The providers' own sections, from their declarations.
	for _, want := range []string{"\nproviders:\n  device_id: 0 ", "\n  tensorrt:\n    fp16: false\n", "\n  openvino:\n    device_type: \"\" "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("starter file lacks %q:\n%s", want, body)
		}
	}
	// A second init refuses to overwrite.
	again := svcCmd(t, nil, "init")
	again.Dir = cmd.Dir
	code, _, stderr = runCmd(t, again)
	oneLineError(t, code, stderr, 1, "svc.yml already exists", "--force")
}

func TestConfigFileModelsAndPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "project.yml")
	body := `name: shop
models:
  iris:
    path: ` + filepath.Join(repoRoot, "examples", "demo") + `
    version: "2024.06"
    description: Iris demo
    metadata: {team: ml}
    labels:
      probabilities: [setosa, versicolor, virginica]
serve:
  host: 0.0.0.0
  port: 1
  workers: 1
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The flags (127.0.0.1, port 0 from startServer) override the file's
	// host and port.
	s := startServer(t, "iris", "--config", cfg)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || strings.HasSuffix(s.URL, ":1") || !strings.Contains(s.stdout.String(), "host      127.0.0.1") {
		t.Fatalf("flags did not override the file: %s\n%s", s.URL, s.stdout)
	}
	h := s.get("/health").JSON(t)
	if h["model"] != "iris" {
		t.Fatalf("health = %v", h)
	}
	info := s.get("/info").JSON(t)
	if info["version"] != "2024.06" {
		t.Errorf("version = %v", info["version"])
	}
	md := info["metadata"].(map[string]any)
	if md["team"] != "ml" || md["description"] != "Iris demo" || md["author"] != "svc tests" {
		t.Errorf("metadata = %v", md)
	}
	outs := info["outputs"].([]any)
	labels, _ := outs[0].(map[string]any)["labels"].([]any)
	if len(labels) != 3 || labels[0] != "setosa" {
		t.Errorf("labels = %v", outs[0])
	}
}

func TestConfigErrorsAtStartup(t *testing.T) {
	t.Parallel()
	sequential(t)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("serve:\n  port: 8080\n  timeout: 3s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "-c", cfg)
	oneLineError(t, code, stderr, 1, cfg, "line 3", "timeout")
	// A provider's own section is as strict, with the line.
	for _, tt := range []struct{ body, want string }{
		{"providers:\n  device_id: 0\n  tensorrt:\n    fp16: true\n    cache: /tmp\n", "line 5: field cache not found in type tensorrt.Settings"},
		{"providers:\n  openvino: {device: GPU}\n", "line 2: field device not found in type openvino.Settings"},
		{"name: x\nproviders:\n  tpu: {}\n", "line 3: providers.tpu is not a provider; the providers are cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu"},
	} {
		if err := os.WriteFile(cfg, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr = runSvc(t, nil, "serve", model("classifier.onnx"), "-c", cfg)
		oneLineError(t, code, stderr, 1, cfg, tt.want)
	}
	code, _, stderr = runSvc(t, nil, "serve", model("classifier.onnx"), "-c", filepath.Join(t.TempDir(), "missing.yml"))
	oneLineError(t, code, stderr, 1, "missing.yml")
}

func TestInferenceTimeout(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("runtime:\n  timeout: 200ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("slow.onnx"), "-c", cfg)
	start := time.Now()
	r := s.predict(slowBody(512))
	elapsed := time.Since(start)
	if r.Status != 504 {
		t.Fatalf("slow request = %d %s", r.Status, r.Body)
	}
	if d := r.Detail(t); d != "Inference timed out after 200ms" {
		t.Fatalf("detail = %q", d)
	}
	t.Logf("504 after %v (timeout 200ms)", elapsed)
	if elapsed > 10*time.Second {
		t.Errorf("the timeout took %v to answer", elapsed)
	}
	if r := s.predict(slowBody(1)); r.Status != 200 {
		t.Fatalf("next request = %d %s", r.Status, r.Body)
	}
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tiny := filepath.Join(dir, "tiny.yml")
	if err := os.WriteFile(tiny, []byte("runtime:\n  memory_limit: 100KiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSvc(t, nil, "serve", model("slow.onnx"), "-c", tiny, "--port", "0")
	oneLineError(t, code, stderr, 1, "more than runtime.memory_limit 100.0 KiB", "raise the limit")

	small := filepath.Join(dir, "small.yml")
	if err := os.WriteFile(small, []byte("runtime:\n  memory_limit: 2MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("slow.onnx"), "-c", small)
	if r := s.predict(slowBody(4)); r.Status != 200 {
		t.Fatalf("small batch under the cap = %d %s", r.Status, r.Body)
	}
	r := s.predict(slowBody(2048))
	if r.Status != 500 || !strings.HasPrefix(r.Detail(t), "Inference failed: ") {
		t.Fatalf("batch over the cap = %d %s", r.Status, r.Body)
	}
	if r := s.get("/health"); r.Status != 200 {
		t.Fatalf("health after the failure = %d", r.Status)
	}
	if r := s.predict(slowBody(4)); r.Status != 200 {
		t.Fatalf("small batch after the failure = %d %s", r.Status, r.Body)
	}
}
