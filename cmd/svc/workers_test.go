//go:build unix

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// supervisorLog finds supervisor log records with the given message.
func (s *server) logRecords(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// workerPids reads the pids the supervisor logged when the workers were
// ready.
func (s *server) workerPids(t *testing.T) map[string]int {
	t.Helper()
	// stdout and stderr reach the test through two pipes, each copied by
	// its own goroutine: the line written before the banner may arrive
	// after it.
	recs := s.logRecords("workers ready")
	for deadline := time.Now().Add(5 * time.Second); len(recs) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		recs = s.logRecords("workers ready")
	}
	if len(recs) != 1 {
		t.Fatalf("%d 'workers ready' records\n%s", len(recs), s.stderr)
	}
	out := map[string]int{}
	for id, pid := range recs[0]["pids"].(map[string]any) {
		out[id] = int(pid.(float64))
	}
	return out
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestWorkersShareThePort(t *testing.T) {
	s := startServer(t, model("slow.onnx"), "--workers", "3")
	if !strings.Contains(s.stdout.String(), "workers   3") || strings.Count(s.stdout.String(), "Endpoints") != 1 {
		t.Fatalf("banner:\n%s", s.stdout)
	}
	pids := s.workerPids(t)
	if len(pids) != 3 {
		t.Fatalf("pids = %v", pids)
	}
	// Which worker accepts a connection is up to the kernel and the
	// workers' schedulers; rounds of concurrent requests spread them.
	var mu sync.Mutex
	seen := map[string]int{}
	for round := 0; round < 5 && len(seen) < 2; round++ {
		var wg sync.WaitGroup
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.predict(slowBody(32))
				if r.Status != 200 {
					t.Errorf("predict = %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				seen[r.Header.Get("X-Worker-Id")]++
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	t.Logf("requests per worker: %v", seen)
	if len(seen) < 2 {
		t.Fatalf("rounds of 12 concurrent requests were all served by %d worker(s): %v", len(seen), seen)
	}
	for id := range seen {
		if _, ok := pids[id]; !ok {
			t.Errorf("unknown X-Worker-Id %q", id)
		}
	}
	if h := s.get("/health"); h.Status != 200 || h.JSON(t)["status"] != "healthy" {
		t.Fatalf("health = %d %s", h.Status, h.Body)
	}
}

func TestWorkerCrashIsRestarted(t *testing.T) {
	s := startServer(t, model("slow.onnx"), "--workers", "2")
	pids := s.workerPids(t)
	victim := pids["2"]

	var (
		stop                    atomic.Bool
		ok, failed, failedAfter atomic.Int64
		restartedAt             atomic.Int64 // unix nanos, once seen
		wg                      sync.WaitGroup
	)
	deadline := time.Now().Add(6 * time.Second)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 400 && !stop.Load() && time.Now().Before(deadline); n++ {
				sent := time.Now().UnixNano()
				status, err := tryPredict(s, slowBody(16))
				switch {
				case err == nil && status == 200:
					ok.Add(1)
				default:
					failed.Add(1)
					if r := restartedAt.Load(); r != 0 && sent > r {
						failedAfter.Add(1)
						t.Errorf("request sent after the restart failed: %v %d", err, status)
					}
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	killed := time.Now()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var replacement int
	for time.Since(killed) < 60*time.Second && replacement == 0 {
		for _, rec := range s.logRecords("worker restarted") {
			if rec["worker"] == float64(2) {
				replacement = int(rec["pid"].(float64))
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(killed)
	restartedAt.Store(time.Now().UnixNano())
	if replacement == 0 {
		t.Fatalf("no replacement for worker 2 after %v\n%s", took, s.stderr)
	}
	// How fast the replacement comes is a benchmark figure, not a test
	// assertion: it loads and warms up the model before it takes requests.
	t.Logf("replacement worker up %v after kill -9", took)
	if replacement == victim || !alive(replacement) || alive(victim) {
		t.Fatalf("victim %d alive=%v, replacement %d alive=%v", victim, alive(victim), replacement, alive(replacement))
	}
	// Keep the load going a while on the replaced set of workers.
	time.Sleep(1500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	t.Logf("load: %d ok, %d failed (all before the replacement was up), %d failed after", ok.Load(), failed.Load(), failedAfter.Load())
	if failed.Load() > 4 {
		t.Errorf("%d requests failed; only those in flight on the killed worker (at most 4) may", failed.Load())
	}
	if ok.Load() == 0 {
		t.Fatal("no request succeeded")
	}
	// The restart reason is logged.
	exits := s.logRecords("worker exited; restarting")
	if len(exits) == 0 || exits[0]["reason"] != "killed by SIGKILL" {
		t.Errorf("exit log: %v", exits)
	}
	// SIGTERM to one worker: it drains and is restarted like a crash.
	pid1 := s.workerPids(t)["1"]
	if err := syscall.Kill(pid1, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := 0
		for _, rec := range s.logRecords("worker restarted") {
			if rec["worker"] == float64(1) {
				n++
			}
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker 1 not restarted after SIGTERM\n%s", s.stderr)
		}
	}
	if r := s.predict(slowBody(1)); r.Status != 200 {
		t.Fatalf("after restarts: %d", r.Status)
	}
}

// tryPredict is predict without failing the test on transport errors.
func tryPredict(s *server, body string) (int, error) {
	resp, err := client.Post(s.URL+"/predict", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

func TestWorkersDrainOnSIGTERM(t *testing.T) {
	s := startServer(t, model("slow.onnx"), "--workers", "2")
	pids := s.workerPids(t)
	var wg sync.WaitGroup
	results := make([]int, 6)
	errs := make([]error, 6)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = tryPredict(s, slowBody(64))
		}()
	}
	time.Sleep(400 * time.Millisecond)
	code := s.stop(syscall.SIGTERM)
	wg.Wait()
	if code != 0 {
		t.Fatalf("supervisor exit code %d\n%s", code, s.stderr)
	}
	for i := range results {
		if errs[i] != nil || results[i] != 200 {
			t.Errorf("request %d: %d %v", i, results[i], errs[i])
		}
	}
	for id, pid := range pids {
		if alive(pid) {
			t.Errorf("worker %s (pid %d) still running", id, pid)
		}
	}
	if len(s.logRecords("shutting down")) != 2 {
		t.Errorf("want both workers to log their drain:\n%s", s.stderr)
	}
}

func TestWorkersFailToLoad(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(bad, []byte("not a model at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr := runSvc(t, nil, "serve", bad, "--workers", "2", "--port", "0")
	oneLineError(t, code, stderr, 1, "worker 1: load model", "model.onnx")
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: restart loop?", took)
	}
}

// TestWorkerMemory measures the resident memory of 1, 2 and 4 workers
// serving the PaddleOCR detector (written down, not asserted).
func TestWorkerMemory(t *testing.T) {
	det := thirdParty(t, "paddleocr-det")
	body := `{"x": ` + image(1, 64, 64, textLine) + `}`
	for _, n := range []int{1, 2, 4} {
		s := startServer(t, det, "--workers", strconv.Itoa(n))
		for i := 0; i < 2*n; i++ {
			if r := s.predict(body); r.Status != 200 {
				t.Fatalf("predict: %d", r.Status)
			}
		}
		total := rssKiB(t, s.cmd.Process.Pid)
		if n > 1 {
			for _, pid := range s.workerPids(t) {
				total += rssKiB(t, pid)
			}
		}
		t.Logf("workers=%d: resident memory %.1f MiB (supervisor + workers)", n, float64(total)/1024)
		s.stop(syscall.SIGTERM)
	}
}

func rssKiB(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}
