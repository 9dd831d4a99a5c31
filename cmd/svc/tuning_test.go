package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/svc-dev/svc/core/sched"
)

// tuningStats is the tuning part of GET /v2/models/{name}/stats.
type tuningStats struct {
	ModelStats []struct {
		Tuning []struct {
			Worker         int  `json:"worker"`
			BatchSizeLimit int  `json:"batch_size_limit"`
			Sessions       int  `json:"sessions"`
			GoProcs        int  `json:"go_procs"`
			MemoryReleased bool `json:"memory_released"`
		} `json:"tuning"`
	} `json:"model_stats"`
}

// TestTuningGauges: each self-tuning controller's decision is a gauge on
// /metrics and an entry of the statistics, as in force, whether it tunes
// or svc.yml fixes it.
func TestTuningGauges(t *testing.T) {
	t.Parallel()
	_, slots := sched.CPUPlan(runtime.NumCPU(), 0)
	tests := []struct {
		name string
		yml  string
		// limit is svc_batch_size_limit (-1: absent); sessions, procs
		// the svc_tuning_* gauges (procs 0: any).
		limit, sessions, procs int
	}{
		{"defaults: adaptive batching starts at one row", "", 1, slots, 0},
		{"a fixed batch size", "batching:\n  adaptive: false\n  max_batch_size: 16\n", 16, slots, 0},
		{"no batching", "batching:\n  enabled: false\n", -1, slots, 0},
		{"a fixed number of Go processors", "runtime:\n  go_procs: 5\n", 1, slots, 5},
		{"one intra-op thread per run: a run per core", "runtime:\n  intra_op_threads: 1\n", 1, runtime.NumCPU(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "svc.yml")
			if err := os.WriteFile(cfg, []byte(tt.yml), 0o644); err != nil {
				t.Fatal(err)
			}
			// Without the test's GOMAXPROCS, which would fix the number.
			s := startServerEnv(t, []string{"GOMAXPROCS"}, model("classifier.onnx"), "--config", cfg, "--access-log", "off")
			sc, _ := scrapeMetrics(t, s, textAccept)
			if _, ok := sc["svc_batch_size_limit"]; ok != (tt.limit >= 0) {
				t.Fatalf("svc_batch_size_limit present: %v, want %v", ok, tt.limit >= 0)
			}
			if tt.limit >= 0 {
				if got := int(sc.value(t, "svc_batch_size_limit", nil)); got != tt.limit {
					t.Errorf("svc_batch_size_limit = %d, want %d", got, tt.limit)
				}
			}
			sessions := int(sc.value(t, "svc_tuning_sessions", nil))
			procs := int(sc.value(t, "svc_tuning_go_procs", nil))
			if sessions != tt.sessions {
				t.Errorf("svc_tuning_sessions = %d, want %d", sessions, tt.sessions)
			}
			if procs < 1 || (tt.procs > 0 && procs != tt.procs) {
				t.Errorf("svc_tuning_go_procs = %d, want %d", procs, tt.procs)
			}
			if got := sc.value(t, "svc_tuning_memory_released", nil); got != 0 {
				t.Errorf("svc_tuning_memory_released = %v before any request", got)
			}

			r := s.get("/v2/models/classifier/stats")
			var st tuningStats
			if r.Status != http.StatusOK || json.Unmarshal(r.Body, &st) != nil || len(st.ModelStats) != 1 || len(st.ModelStats[0].Tuning) != 1 {
				t.Fatalf("stats: %d %s", r.Status, r.Body)
			}
			tu := st.ModelStats[0].Tuning[0]
			if tu.Worker != 0 || tu.BatchSizeLimit != max(tt.limit, 0) || tu.Sessions != sessions || tu.GoProcs != procs || tu.MemoryReleased {
				t.Errorf("stats tuning %+v, gauges: limit %d, sessions %d, procs %d", tu, tt.limit, sessions, procs)
			}
		})
	}
}

// TestTuningMemoryReleased: after a request, once the model has been idle
// for runtime.release_memory_after, the reclaimer's gauge turns 1. (That
// the next request turns it back is the reclaimer's unit test's: here it
// would race the next release.)
func TestTuningMemoryReleased(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("runtime:\n  release_memory_after: 50ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("classifier.onnx"), "--config", cfg, "--access-log", "off")
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != http.StatusOK {
		t.Fatalf("predict: %d %s", r.Status, r.Body)
	}
	// A scrape is no inference request: the model stays idle.
	waitGauge(t, s, "svc_tuning_memory_released", "at 1 on an idle server", func(v float64) bool { return v == 1 })
	r := s.get("/v2/models/classifier/stats")
	var st tuningStats
	if json.Unmarshal(r.Body, &st) != nil || len(st.ModelStats) != 1 || len(st.ModelStats[0].Tuning) != 1 || !st.ModelStats[0].Tuning[0].MemoryReleased {
		t.Fatalf("stats: %d %s", r.Status, r.Body)
	}
}

// TestAdaptiveThreadsIgnored: runtime.adaptive_threads, whose controller
// measured no gain, is still read, has no effect, and the server says so
// once, at its line.
func TestAdaptiveThreadsIgnored(t *testing.T) {
	t.Parallel()
	sequential(t)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("runtime:\n  intra_op_threads: 1\n  adaptive_threads: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("classifier.onnx"), "--config", cfg, "--access-log", "off")
	recs := s.logRecords(cfg + ": line 3: runtime.adaptive_threads has no effect any more: a second session with every core for runs that arrive alone measured no faster than runs on their share of the cores (docs/performance.md); remove it")
	if len(recs) != 1 || recs[0]["level"] != "warn" {
		t.Fatalf("warnings %v\n%s", recs, s.stderr)
	}
	sc, _ := scrapeMetrics(t, s, textAccept)
	if got := int(sc.value(t, "svc_tuning_sessions", nil)); got != runtime.NumCPU() {
		t.Fatalf("svc_tuning_sessions = %d, want the %d run slots", got, runtime.NumCPU())
	}
}
