package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/workers"
)

// affinityConfig writes svc.yml serving the classifier as "iris" with
// runtime.cpu_affinity set to value.
func affinityConfig(t *testing.T, value string) string {
	t.Helper()
	yml := fmt.Sprintf("models:\n  iris:\n    path: %s\nruntime:\n  cpu_affinity: %s\n", model("classifier.onnx"), value)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// cpusAllowed is /proc/PID/status's Cpus_allowed_list.
func cpusAllowed(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}

// TestWorkersPinned: with --workers 2 and runtime.cpu_affinity: auto,
// each worker runs on its own cores, as its /proc/PID/status says, and
// the log names each worker's set; explicit sets svc cannot apply stop the
// start naming the key.
func TestWorkersPinned(t *testing.T) {
	t.Parallel()
	allowed, err := workers.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	plan, why, err := workers.PlanAffinity(allowed, 2, nil)
	if err != nil || why != "" {
		t.Fatalf("this machine's cores %v cannot take two pinned workers: %s %v", allowed, why, err)
	}
	s := startServer(t, "iris", "--config", affinityConfig(t, "auto"), "--workers", "2")
	recs := s.waitLog("worker pinned", 2, nil)
	seen := map[string]bool{}
	for _, r := range recs {
		id, pid := int(r["worker"].(float64)), int(r["pid"].(float64))
		want := workers.FormatCPUs(plan[id-1])
		if got := cpusAllowed(t, pid); got != want || r["cpus"] != want {
			t.Errorf("worker %d (pid %d): Cpus_allowed_list %s, logged %v; want %s", id, pid, got, r["cpus"], want)
		}
		seen[want] = true
	}
	if len(seen) != 2 {
		t.Errorf("the workers' sets %v are not two", seen)
	}
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != 200 {
		t.Errorf("pinned workers answer %d %s", r.Status, r.Body)
	}
	// The statistics' tuning says each worker's cores.
	tuning, _ := statsOf(t, s.get("/v2/models/iris/stats"))["tuning"].([]any)
	for i, id := range []float64{1, 2} {
		if i >= len(tuning) || tuning[i].(map[string]any)["worker"] != id ||
			tuning[i].(map[string]any)["cpus"] != workers.FormatCPUs(plan[i]) {
			t.Errorf("stats tuning %v: want worker %v on cores %s", tuning, id, workers.FormatCPUs(plan[i]))
		}
	}
	s.stopNoPanic()
	for _, tt := range []struct{ value, want string }{
		{"[[0]]", "runtime.cpu_affinity: 1 sets of cores for 2 workers"},
		{"[[0], [1000]]", "runtime.cpu_affinity: set 2 has core 1000, which this process may not use"},
		{"[[0, 1], [1]]", "runtime.cpu_affinity core 1 is in set 1 and set 2"},
	} {
		code, _, stderr := runSvc(t, nil, "serve", "iris", "--config", affinityConfig(t, tt.value), "--workers", "2", "--port", "0")
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("cpu_affinity %s: exit %d, stderr lacks %q:\n%s", tt.value, code, tt.want, stderr)
		}
	}
}
