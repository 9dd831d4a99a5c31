package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGoProcsFollowRunLength serves a model whose runs take milliseconds,
// under load: it gets one Go processor more than the cores
// (go_sched_gomaxprocs_threads and svc_tuning_go_procs on /metrics, and a
// log line); GOMAXPROCS in the environment and runtime.go_procs fix the
// number whatever the runs. That short runs keep one processor per core is
// the tuner's unit tests' (core/sched): it depends on how long runs take on
// the machine, and a loaded machine stretches them.
func TestGoProcsFollowRunLength(t *testing.T) {
	if v, set := os.LookupEnv("GOMAXPROCS"); set {
		// The servers must start without it, as they do in production.
		os.Unsetenv("GOMAXPROCS")
		t.Cleanup(func() { os.Setenv("GOMAXPROCS", v) })
	}
	fixed := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(fixed, []byte("runtime:\n  go_procs: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		model string
		body  string
		env   []string
		args  []string
		// start is the processors expected at start (0: any); extra is
		// the processors expected over it under load.
		start, extra int
	}{
		{"long runs add a processor", "slow.onnx", slowBody(1), nil, nil, 0, 1},
		{"GOMAXPROCS fixes it", "slow.onnx", slowBody(1), []string{"GOMAXPROCS=1"}, nil, 1, 0},
		{"runtime.go_procs fixes it", "slow.onnx", slowBody(1), nil, []string{"--config", fixed}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServerEnv(t, tt.env, append([]string{model(tt.model), "--access-log", "off"}, tt.args...)...)
			procs := func() int {
				sc, _ := scrapeMetrics(t, s, prometheusAccept)
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

			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var ok, bad atomic.Int64
			var firstBad atomic.Value
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/predict", strings.NewReader(tt.body))
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
				}()
			}
			defer func() { cancel(); wg.Wait() }()

			// The tuner decides after three windows of 200 ms in a row.
			// A change is awaited for up to 30 s (a loaded CI machine
			// delays the runs and the tuner alike) and ends the wait; that
			// a fixed number stays is checked after 4 s of load, 20
			// windows in which a tuner would have added one.
			want := start + tt.extra
			got := start
			wait := 4 * time.Second
			if tt.extra != 0 {
				wait = 30 * time.Second
			}
			began := time.Now()
			for deadline := began.Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if got = procs(); got != start {
					break
				}
			}
			t.Logf("GOMAXPROCS %d (from %d) after %v of load, %d requests", got, start, time.Since(began).Round(time.Millisecond), ok.Load())
			cancel()
			wg.Wait()
			if bad.Load() > 0 {
				t.Fatalf("%d requests failed under load (first: %v)", bad.Load(), firstBad.Load())
			}
			if ok.Load() == 0 {
				t.Fatal("no request succeeded")
			}
			if got != want {
				t.Fatalf("GOMAXPROCS %d after %d requests, started at %d: want %d", got, ok.Load(), start, want)
			}
			changed := false
			for _, line := range strings.Split(s.stderr.String()+s.stdout.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "Go processors set for the length of the model's runs" {
					continue
				}
				changed = true
				if int(rec["gomaxprocs"].(float64)) != want || int(rec["was"].(float64)) != start {
					t.Errorf("log line %s: want gomaxprocs %d, was %d", line, want, start)
				}
			}
			if changed != (tt.extra != 0) {
				t.Errorf("logged a change: %v, want %v\nstderr:\n%s", changed, tt.extra != 0, s.stderr)
			}
		})
	}
}
