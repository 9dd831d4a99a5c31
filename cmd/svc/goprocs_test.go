package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestGoProcsFollowRunLength serves a model whose runs take milliseconds,
// under load: it gets one Go processor more than the cores
// (go_sched_gomaxprocs_threads and svc_tuning_go_procs on /metrics, and a
// log line). GOMAXPROCS in the environment and runtime.go_procs fix the
// number: then no tuner runs. A tuner sets the cores' number as it starts,
// before the banner, and later at most one more, so fixed numbers above
// the CPUs show at the first scrape that none was started. That short runs
// keep one processor per core is the tuner's unit tests' (core/sched): it
// depends on how long runs take on the machine, and a loaded machine
// stretches them.
func TestGoProcsFollowRunLength(t *testing.T) {
	t.Parallel()
	skipShort(t, "loads a server until its tuner decides: seconds of inference")
	// Above what a tuner sets: the cores (at most the CPUs), or one more.
	envProcs, cfgProcs := runtime.NumCPU()+2, runtime.NumCPU()+3
	fixed := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(fixed, []byte("runtime:\n  go_procs: "+strconv.Itoa(cfgProcs)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		// start is the processors expected at start (0: any); extra is
		// the processors expected over it under load.
		start, extra int
	}{
		{"long runs add a processor", nil, nil, 0, 1},
		{"GOMAXPROCS fixes it", []string{"GOMAXPROCS=" + strconv.Itoa(envProcs)}, nil, envProcs, 0},
		{"runtime.go_procs fixes it", nil, []string{"--config", fixed}, cfgProcs, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The servers start without the test's GOMAXPROCS, as they
			// do in production.
			env := append([]string{"GOMAXPROCS"}, tt.env...)
			s := startServerEnv(t, env, append([]string{model("slow.onnx"), "--access-log", "off"}, tt.args...)...)
			procs := func() int {
				sc, _ := scrapeMetrics(t, s, textAccept)
				n := int(sc.value(t, "go_sched_gomaxprocs_threads", nil))
				if tuned := int(sc.value(t, "svc_tuning_go_procs", nil)); tuned != n {
					t.Fatalf("svc_tuning_go_procs = %d, go_sched_gomaxprocs_threads = %d", tuned, n)
				}
				return n
			}
			start := procs()
			if start < 1 || (tt.start > 0 && start != tt.start) {
				t.Fatalf("%d Go processors at start, want %d", start, tt.start)
			}
			got := start
			if tt.extra != 0 {
				got = loadUntilProcsChange(t, s, slowBody(1), procs, start)
			}
			if want := start + tt.extra; got != want {
				t.Fatalf("GOMAXPROCS %d, started at %d: want %d", got, start, want)
			}
			// The log is all out once svc has exited.
			if code := s.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("exit code %d\n%s", code, s.stderr)
			}
			changed := false
			for _, line := range strings.Split(s.stderr.String()+s.stdout.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "Go processors set for the length of the model's runs" {
					continue
				}
				changed = true
				if int(rec["gomaxprocs"].(float64)) != got || int(rec["was"].(float64)) != start {
					t.Errorf("log line %s: want gomaxprocs %d, was %d", line, got, start)
				}
			}
			if changed != (tt.extra != 0) {
				t.Errorf("logged a change: %v, want %v\nstderr:\n%s", changed, tt.extra != 0, s.stderr)
			}
		})
	}
}

// loadUntilProcsChange sends body to s from two clients until procs
// differs from start (the tuner decides after three windows of 200 ms in
// a row), and returns the new number. Every request must succeed.
func loadUntilProcsChange(t *testing.T, s *server, body string, procs func() int, start int) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var ok, bad atomic.Int64
	var firstBad atomic.Value
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/predict", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						bad.Add(1)
						firstBad.CompareAndSwap(nil, err.Error())
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, resp.Status)
				}
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	began := time.Now()
	got := start
	waitUntil(t, s.done, "GOMAXPROCS raised under load", func() error {
		if got = procs(); got == start {
			return fmt.Errorf("GOMAXPROCS still %d, %d requests", got, ok.Load())
		}
		return nil
	})
	t.Logf("GOMAXPROCS %d (from %d) after %v of load, %d requests", got, start, time.Since(began).Round(time.Millisecond), ok.Load())
	cancel()
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d requests failed under load (first: %v)", bad.Load(), firstBad.Load())
	}
	return got
}
