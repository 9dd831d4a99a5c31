package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWrkScript runs the real wrk with build/bench-wrk.lua against a
// server that answers 200 to one body and 400 to the other: every request
// is a POST of one of the bodies with Content-Type application/json, both
// bodies are sent, and the JSON the script writes (read as Wrk) counts the
// 400s and quotes the first.
func TestWrkScript(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not installed: run build/bench-deps.sh (make bench and ci/install-deps.sh install it)")
	}
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

	dir := t.TempDir()
	bodies := filepath.Join(dir, "bodies")
	if err := os.Mkdir(bodies, 0o755); err != nil {
		t.Fatal(err)
	}
	good, bad := `{"x":[[1,2]]}`, `{"bad":[[1,2]]}`
	for name, b := range map[string]string{"1.json": good, "2.json": bad} {
		if err := os.WriteFile(filepath.Join(bodies, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "wrk.json")
	cmd := exec.Command(wrk, "-t1", "-c2", "-d1s", "-s", filepath.Join("..", "..", "build", "bench-wrk.lua"), srv.URL+"/predict")
	cmd.Env = append(os.Environ(), "WRK_BODIES="+bodies, "WRK_OUT="+out)
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
}
