//go:build unix

package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// workerPids reads the pids the supervisor logged when the workers were
// ready.
func (s *server) workerPids(t *testing.T) map[string]int {
	t.Helper()
	// stdout and stderr reach the test through two pipes, each copied by
	// its own goroutine: the line written before the banner may arrive
	// after it.
	s.waitLog("workers ready", 1, nil)
	recs := s.logRecords("workers ready")
	if len(recs) != 1 {
		t.Fatalf("%d 'workers ready' records\n%s", len(recs), s.stderr)
	}
	out := map[string]int{}
	for id, pid := range recs[0]["pids"].(map[string]any) {
		out[id] = int(pid.(float64))
	}
	return out
}

// waitRestart waits until the supervisor has restarted worker id n times,
// and returns the last replacement's pid.
func (s *server) waitRestart(id, n int) int {
	s.t.Helper()
	recs := s.waitLog("worker restarted", n, func(rec map[string]any) bool { return rec["worker"] == float64(id) })
	return int(recs[len(recs)-1]["pid"].(float64))
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// stopProcess stops pid with SIGSTOP and waits until every one of its
// threads is stopped: from then on it accepts no connection.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, nil, fmt.Sprintf("every thread of process %d stopped by SIGSTOP", pid), func() error {
		if !allThreadsStopped(t, pid) {
			return errors.New("a thread still runs")
		}
		return nil
	})
}

// allThreadsStopped reports whether every thread of pid is in state T
// (stopped by a signal).
func allThreadsStopped(t *testing.T, pid int) bool {
	t.Helper()
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			return false // a thread that ended meanwhile: look again
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		if fields := strings.Fields(rest); len(fields) == 0 || fields[0] != "T" {
			return false
		}
	}
	return true
}

func continueProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// TestWorkersShareThePort: every worker serves on the one port. Which
// worker accepts a connection is up to the kernel and the workers'
// schedulers, so each worker in turn is left alone on the port (the
// others stopped with SIGSTOP) and must answer a request on a new
// connection.
func TestWorkersShareThePort(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("slow.onnx"), "--workers", "3")
	if !strings.Contains(s.stdout.String(), "workers   3") || strings.Count(s.stdout.String(), "Endpoints") != 1 {
		t.Fatalf("banner:\n%s", s.stdout)
	}
	pids := s.workerPids(t)
	if len(pids) != 3 {
		t.Fatalf("pids = %v", pids)
	}
	for _, id := range []string{"1", "2", "3"} {
		for other, pid := range pids {
			if other != id {
				stopProcess(t, pid)
			}
		}
		r := freshDo(t, s, http.MethodPost, "/predict", strings.NewReader(slowBody(2)), "Content-Type", "application/json")
		if r.Status != 200 || r.Header.Get("X-Worker-Id") != id {
			t.Errorf("with worker %s alone on the port: %d from worker %q %s", id, r.Status, r.Header.Get("X-Worker-Id"), r.Body)
		}
		for other, pid := range pids {
			if other != id {
				continueProcess(t, pid)
			}
		}
	}
	if h := s.get("/health"); h.Status != 200 || h.JSON(t)["status"] != "healthy" {
		t.Fatalf("health = %d %s", h.Status, h.Body)
	}
}

// TestWorkerCrashIsRestarted kills a worker under load: the supervisor
// starts a replacement, only the requests in flight on the killed worker
// fail, and the load goes on. Each request opens a new connection: a
// kept-alive connection to the killed worker would fail the next request
// sent on it as well.
func TestWorkerCrashIsRestarted(t *testing.T) {
	t.Parallel()
	skipShort(t, "kills a worker under load: seconds of inference")
	s := startServer(t, model("slow.onnx"), "--workers", "2")
	pids := s.workerPids(t)
	victim := pids["2"]

	var (
		stop, restarted atomic.Bool
		ok, failed      atomic.Int64
		wg              sync.WaitGroup
	)
	served := make(chan struct{}, 1) // a request succeeded
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				after := restarted.Load()
				status, err := freshPredict(s, slowBody(16))
				if err == nil && status == 200 {
					ok.Add(1)
					select {
					case served <- struct{}{}:
					default:
					}
					continue
				}
				failed.Add(1)
				if after {
					t.Errorf("request sent after the restart failed: %v %d", err, status)
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	// waitServed waits until n more requests have succeeded.
	waitServed := func(n int64, when string) {
		t.Helper()
		want := ok.Load() + n
		timeout := time.NewTimer(patience)
		defer timeout.Stop()
		for ok.Load() < want {
			select {
			case <-served:
			case <-timeout.C:
				t.Fatalf("%d of %d requests served %s after %v", n-(want-ok.Load()), n, when, patience)
			}
		}
	}
	waitServed(4, "before the kill")
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	replacement := s.waitRestart(2, 1)
	restarted.Store(true)
	if replacement == victim || !alive(replacement) || alive(victim) {
		t.Fatalf("victim %d alive=%v, replacement %d alive=%v", victim, alive(victim), replacement, alive(replacement))
	}
	// The load goes on with the replaced set of workers.
	waitServed(8, "after the restart")
	stop.Store(true)
	wg.Wait()
	t.Logf("load: %d ok, %d failed", ok.Load(), failed.Load())
	if failed.Load() > 4 {
		t.Errorf("%d requests failed; only those in flight on the killed worker (at most 4) may", failed.Load())
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
	s.waitRestart(1, 1)
	if r := s.predict(slowBody(1)); r.Status != 200 {
		t.Fatalf("after restarts: %d", r.Status)
	}
}

// freshPredict is predict on a new connection, without failing the test on
// transport errors.
func freshPredict(s *server, body string) (int, error) {
	resp, err := freshClient.Post(s.URL+"/predict", "application/json", strings.NewReader(body))
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

// TestWorkersDrainOnSIGTERM: requests that the workers have begun when the
// supervisor gets SIGTERM are served before they exit. The requests are
// held (their bodies incomplete) until both workers log their drain.
func TestWorkersDrainOnSIGTERM(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("slow.onnx"), "--workers", "2")
	pids := s.workerPids(t)
	held := make([]*heldRequest, 6)
	for i := range held {
		held[i] = holdPredict(t, s, slowBody(2))
	}
	s.waitInFlight(len(held))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLog("shutting down", 2, nil)
	statuses, errs := finishAll(held)
	// The SIGTERM above stops it: wait (signal 0 sends nothing).
	if code := s.stop(syscall.Signal(0)); code != 0 {
		t.Fatalf("supervisor exit code %d\n%s", code, s.stderr)
	}
	for i := range held {
		if errs[i] != nil || statuses[i] != 200 {
			t.Errorf("request %d: %d %v", i, statuses[i], errs[i])
		}
	}
	for id, pid := range pids {
		if alive(pid) {
			t.Errorf("worker %s (pid %d) still running", id, pid)
		}
	}
	if n := len(s.logRecords("shutting down")); n != 2 {
		t.Errorf("%d drain records, want one of each worker:\n%s", n, s.stderr)
	}
}

func TestWorkersFailToLoad(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(bad, []byte("not a model at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A restart loop would log each restart (stderr is one line) and not
	// exit (runSvc gives up).
	code, stdout, stderr := runSvc(t, nil, "serve", bad, "--workers", "2", "--port", "0")
	oneLineError(t, code, stderr, 1, "worker 1: load model", "model.onnx")
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
}

// TestWorkerMemory measures the resident memory of 1, 2 and 4 workers
// serving the PaddleOCR detector (written down, not asserted).
func TestWorkerMemory(t *testing.T) {
	t.Parallel()
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
