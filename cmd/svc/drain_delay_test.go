//go:build unix

package main_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDrainDelayKeepsAccepting shows what serve.drain_delay promises: after
// SIGTERM, readiness is false at once while new connections are still
// accepted and answered; a second signal ends the delay and svc exits 0,
// alone and with workers (the supervisor passes the second signal on).
// The delay (10 minutes) is never waited for: every step waits on an event
// (a log record, an answer, the exit), so the test does not depend on time.
func TestDrainDelayKeepsAccepting(t *testing.T) {
	t.Parallel()
	skipShort(t, "servers stopped twice")
	for _, tt := range []struct {
		name      string
		processes int // that log the drain delay
		args      []string
	}{
		{"one process", 1, nil},
		{"workers 2", 2, []string{"--workers", "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) { drainDelay(t, tt.processes, tt.args) })
	}
}

func drainDelay(t *testing.T, processes int, args []string) {
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("serve:\n  drain_delay: 10m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, append([]string{model("classifier.onnx"), "--config", cfg}, args...)...)
	if r := freshGet(t, s, "/v2/health/ready"); r.Status != http.StatusOK {
		t.Fatalf("ready before SIGTERM: %d %s", r.Status, r.Body)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLog("not ready; accepting for the drain delay", processes, nil)

	tests := []struct {
		name       string
		method     string
		path, body string
		want       int
	}{
		{"readiness", http.MethodGet, "/v2/health/ready", "", http.StatusServiceUnavailable},
		{"model readiness", http.MethodGet, "/v2/models/classifier/ready", "", http.StatusServiceUnavailable},
		{"liveness", http.MethodGet, "/v2/health/live", "", http.StatusOK},
		{"predict", http.MethodPost, "/predict", `{"input": [6.7, 3.0, 5.2, 2.3]}`, http.StatusOK},
		{"v2 infer", http.MethodPost, "/v2/models/classifier/infer",
			`{"inputs": [{"name": "input", "shape": [1, 4], "datatype": "FP32", "data": [6.7, 3.0, 5.2, 2.3]}]}`, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A new connection each time: the listener still accepts.
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := freshDo(t, s, tt.method, tt.path, body, "Content-Type", "application/json")
			if r.Status != tt.want {
				t.Fatalf("%s %s during the drain delay: %d %s, want %d", tt.method, tt.path, r.Status, r.Body, tt.want)
			}
		})
	}

	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d after the second SIGTERM\n%s", code, s.stderr)
	}
	if len(s.logRecords("drain delay cut short")) != processes {
		t.Fatalf("no 'drain delay cut short' record:\n%s", s.stderr)
	}
}
