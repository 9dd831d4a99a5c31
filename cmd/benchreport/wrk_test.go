package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWrkScript runs the real wrk with build/bench-wrk.lua against a
// server that answers 200 to one body and 400 to the other: every request
// is a POST of one of the bodies with Content-Type application/json, both
// bodies are sent, and the JSON the script writes (read as Wrk) counts the
// 400s and quotes the first.
func TestWrkScript(t *testing.T) {
	wrk := lookWrk(t)
	var (
		mu             sync.Mutex
		seen           = map[string]int{}
		wrongMethod    int
		wrongType      int
		wrongPath      int
		served, failed int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		seen[string(body)]++
		if r.Method != http.MethodPost {
			wrongMethod++
		}
		if r.Header.Get("Content-Type") != "application/json" {
			wrongType++
		}
		if r.URL.Path != "/predict" {
			wrongPath++
		}
		if strings.Contains(string(body), "bad") {
			failed++
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"detail":"Invalid value for 'bad' | here"}`)
			return
		}
		served++
		io.WriteString(w, `{"y":[1]}`)
	}))
	defer srv.Close()

	good, bad := `{"x":[[1,2]]}`, `{"bad":[[1,2]]}`
	res, b := runWrkScript(t, wrk, srv.URL, []string{good, bad}, []string{"-t1", "-c2"})

	mu.Lock()
	defer mu.Unlock()
	if wrongMethod+wrongType+wrongPath > 0 || len(seen) != 2 || seen[good] == 0 || seen[bad] == 0 {
		t.Fatalf("server saw %d wrong methods, %d wrong content types, %d wrong paths; bodies %v", wrongMethod, wrongType, wrongPath, seen)
	}
	if res.Requests == 0 || res.Threads != 1 || res.Bodies != 2 || res.DurationUS <= 0 {
		t.Fatalf("result = %s", b)
	}
	// wrk counts the answers it read; the server may have answered a few
	// more that wrk cut off when the time was up.
	if res.Non200 == 0 || res.Non200 > int64(failed) || res.Requests-res.Non200 > int64(served) || res.Errors.Status != res.Non200 {
		t.Errorf("non200 %d of %d (status errors %d); the server answered %d 400s and %d 200s", res.Non200, res.Requests, res.Errors.Status, failed, served)
	}
	if res.Failed() != res.Non200 || res.RPS() <= 0 {
		t.Errorf("Failed() = %d, RPS() = %v", res.Failed(), res.RPS())
	}
	if want := `400 {"detail":"Invalid value for 'bad' | here"}`; res.FirstNon200 != want {
		t.Errorf("first_non200 = %q, want %q", res.FirstNon200, want)
	}
	if res.LatencyUS.P50 <= 0 || res.LatencyUS.Max < res.LatencyUS.P50 {
		t.Errorf("latency = %+v", res.LatencyUS)
	}
	if res.MeasuredUS != nil {
		t.Errorf("measured_us without WRK_LATENCY: %+v", *res.MeasuredUS)
	}
}

// TestWrkScriptTimesRequests: with WRK_LATENCY=1 every request carries an
// X-Request-ID, distinct among those in flight, and the script times each
// answer by the id the server echoes. A server that holds every tenth
// request 5 ms gives a tail the timings show, and by Little's law their
// mean × throughput is at most the connections (wrk's corrected figures
// need not be).
func TestWrkScriptTimesRequests(t *testing.T) {
	wrk := lookWrk(t)
	var (
		mu       sync.Mutex
		inFlight = map[string]bool{}
		clash    string
		missing  int
		n        int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get("X-Request-ID")
		mu.Lock()
		n++
		slow := n%10 == 0
		if id == "" {
			missing++
		} else if inFlight[id] && clash == "" {
			clash = id
		}
		inFlight[id] = true
		mu.Unlock()
		if slow {
			time.Sleep(5 * time.Millisecond)
		}
		mu.Lock()
		delete(inFlight, id)
		mu.Unlock()
		w.Header().Set("X-Request-ID", id)
		io.WriteString(w, `{"y":[1]}`)
	}))
	defer srv.Close()

	res, b := runWrkScript(t, wrk, srv.URL, []string{`{"x":[1]}`, `{"x":[1]}`, `{"x":[1]}`}, []string{"-t2", "-c4"}, "WRK_LATENCY=1")
	mu.Lock()
	defer mu.Unlock()
	if missing > 0 || clash != "" {
		t.Fatalf("%d requests without an id; id %q twice in flight", missing, clash)
	}
	m := res.MeasuredUS
	if m == nil {
		t.Fatalf("no measured_us: %s", b)
	}
	if m.Count < res.Requests-4 || m.Count > res.Requests {
		t.Errorf("%d requests timed of %d answered", m.Count, res.Requests)
	}
	if !(m.P50 > 0 && m.P50 <= m.P90 && m.P90 <= m.P99 && m.P99 <= m.Max) || m.P99 < 5000 || m.P50 > 5000 {
		t.Errorf("timings %+v: want a p99 of at least the 5 ms hold and a p50 under it", *m)
	}
	if inFlight := m.Mean * res.RPS() / 1e6; inFlight > 4.4 {
		t.Errorf("mean %.0f µs × %.0f/s = %.1f in flight on 4 connections", m.Mean, res.RPS(), inFlight)
	}
}

// runWrkScript runs wrk for a second with build/bench-wrk.lua against
// url/predict, the bodies in a fresh WRK_BODIES directory, and returns
// what the script wrote, parsed and raw.
func runWrkScript(t *testing.T, wrk, url string, bodies, args []string, env ...string) (Wrk, []byte) {
	t.Helper()
	dir := t.TempDir()
	bodyDir := filepath.Join(dir, "bodies")
	if err := os.Mkdir(bodyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, body := range bodies {
		if err := os.WriteFile(filepath.Join(bodyDir, fmt.Sprintf("%d.json", i+1)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "wrk.json")
	cmd := exec.Command(wrk, append(append([]string(nil), args...), "-d1s", "-s", filepath.Join("..", "..", "build", "bench-wrk.lua"), url+"/predict")...)
	cmd.Env = append(append(os.Environ(), "WRK_BODIES="+bodyDir, "WRK_OUT="+out), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wrk: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res Wrk
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return res, b
}

// lookWrk is the path of the installed wrk; the test fails without it.
func lookWrk(t *testing.T) string {
	t.Helper()
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not installed: run build/bench-deps.sh (make bench and ci/install-deps.sh install it)")
	}
	return wrk
}
