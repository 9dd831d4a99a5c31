package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/cmd/genmodels/slowload"
)

// startLoading runs 'svc serve' on a model and returns as soon as it
// listens (its "listening" log line, shown with --verbose), before the
// model has loaded.
func startLoading(t *testing.T, modelPath string, args ...string) *server {
	t.Helper()
	full := append([]string{"serve", modelPath, "--host", "127.0.0.1", "--port", "0", "--verbose"}, args...)
	cmd := svcCmd(t, nil, full...)
	s := &server{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.kill)
	rec := s.waitLog("listening", 1, nil)[0]
	s.URL = "http://" + rec["http"].(string)
	return s
}

// TestServesWhileLoading: a model that takes seconds to load (ONNX
// Runtime folds a 4608×4608 matrix product while creating the session)
// answers /health at once, inference and the model-derived endpoints with
// 503 until it is loaded, then serves.
func TestServesWhileLoading(t *testing.T) {
	t.Parallel()
	skipShort(t, "its model takes seconds of CPU to load")
	dir := filepath.Join(t.TempDir(), "slowload")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := slowload.Write(filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	s := startLoading(t, dir)

	h := s.get("/health")
	healthAfter := time.Since(started)
	if h.Status != 200 || string(h.Body) != `{"status":"healthy","model":"slowload"}` {
		t.Fatalf("/health while loading: %d %s", h.Status, h.Body)
	}
	if strings.Contains(s.stdout.String(), "URL") {
		t.Fatalf("the banner came before the first /health (%v); the model loaded too fast to test this", healthAfter)
	}
	for _, path := range []string{"/info", "/metrics", "/docs", "/openapi.json"} {
		r := s.get(path)
		if r.Status != http.StatusServiceUnavailable {
			t.Errorf("GET %s while loading: %d %s", path, r.Status, r.Body)
		}
	}
	r := s.predict(`{"x": [[1, 2, 3, 4]]}`)
	if r.Status != http.StatusServiceUnavailable || r.Detail(t) != "Model 'slowload' is loading; try again shortly" {
		t.Fatalf("/predict while loading: %d %s", r.Status, r.Body)
	}
	t.Logf("/health answered %v after start; the model was still loading", healthAfter)

	// The banner comes once the model is ready; then it serves.
	s.waitBanner()
	t.Logf("ready %v after start", time.Since(started))
	if r := s.predict(`{"x": [[1, 2, 3, 4], [0.5, -1, 0, 9]]}`); r.Status != 200 || string(r.Body) != `{"y":[[2,3,4,5],[1.5,0,1,10]]}` {
		t.Fatalf("/predict when ready: %d %s", r.Status, r.Body)
	}
	if r := s.get("/info"); r.Status != 200 {
		t.Fatalf("/info when ready: %d %s", r.Status, r.Body)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
}

// TestStopWhileLoading: SIGTERM while the model loads ends the process
// cleanly.
func TestStopWhileLoading(t *testing.T) {
	t.Parallel()
	skipShort(t, "its model takes seconds of CPU to load")
	dir := t.TempDir()
	file := filepath.Join(dir, "model.onnx")
	if err := slowload.Write(file); err != nil {
		t.Fatal(err)
	}
	s := startLoading(t, file)
	if r := s.get("/health"); r.Status != 200 {
		t.Fatalf("/health: %d", r.Status)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d after SIGTERM while loading\n%s", code, s.stderr)
	}
	if strings.Contains(s.stdout.String(), "URL") {
		t.Errorf("banner printed although the model never became ready:\n%s", s.stdout)
	}
}
