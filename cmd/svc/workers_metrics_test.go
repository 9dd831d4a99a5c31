//go:build linux

package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freshClient opens a new connection for every request: a keep-alive
// connection accepted by a worker that is later stopped would hang.
var freshClient = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// freshGet is s.get over freshClient, with extra headers.
func freshGet(t *testing.T, s *server, path string, headers ...string) response {
	t.Helper()
	return freshDo(t, s, http.MethodGet, path, nil, headers...)
}

// freshDo is a request over freshClient, with headers (name, value, ...).
func freshDo(t *testing.T, s *server, method, path string, body io.Reader, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := freshClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// workersIn lists the values of the worker label among family name's
// series.
func (sc scrape) workersIn(name string) []string {
	var out []string
	for _, m := range sc[strings.TrimSuffix(name, "_total")].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "worker" && !slices.Contains(out, lp.GetValue()) {
				out = append(out, lp.GetValue())
			}
		}
	}
	sort.Strings(out)
	return out
}

// workerEnv reads a variable of a process's environment.
func workerEnv(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(name+"=")); ok {
			return string(v)
		}
	}
	t.Fatalf("process %d has no %s", pid, name)
	return ""
}

// statsOf decodes /v2/models/{name}/stats.
func statsOf(t *testing.T, r response) map[string]any {
	t.Helper()
	var st struct {
		ModelStats []map[string]any `json:"model_stats"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &st) != nil || len(st.ModelStats) != 1 {
		t.Fatalf("stats: %d %s", r.Status, r.Body)
	}
	return st.ModelStats[0]
}

func successCount(t *testing.T, st map[string]any) int {
	t.Helper()
	return int(st["inference_stats"].(map[string]any)["success"].(map[string]any)["count"].(float64))
}

// TestPrometheusWithWorkers: whichever worker a scrape reaches, it answers
// with every worker's series, each labelled with its worker, and the
// counts add up to the requests each worker served; the statistics are
// summed. A stopped worker is left out (and counted) without blocking the
// scrape; a killed one is left out until its replacement is ready, which
// then appears with fresh counters; the private sockets are gone after
// shutdown.
func TestPrometheusWithWorkers(t *testing.T) {
	t.Parallel()
	skipShort(t, "scrapes worker processes through a stop, a kill and a restart")
	s := startServer(t, model("classifier.onnx"), "--workers", "2")
	pids := s.workerPids(t)
	dir := workerEnv(t, pids["1"], "SVC_WORKER_SOCKETS")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %s: %v %v", dir, fi.Mode(), err)
	}

	// Rounds of concurrent requests until both workers have served some.
	var mu sync.Mutex
	served := map[string]int{}
	total := 0
	for round := 0; round < 20 && len(served) < 2; round++ {
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.predict(`{"input": [[1, 2, 3, 4]]}`)
				if r.Status != http.StatusOK {
					t.Errorf("predict: %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				served[r.Header.Get("X-Worker-Id")]++
				total++
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	if len(served) != 2 {
		t.Fatalf("requests were served by %v", served)
	}
	t.Logf("requests per worker: %v", served)

	labels := func(worker string) map[string]string {
		return map[string]string{"model": "classifier", "version": "3", "status": "success", "worker": worker}
	}
	answeredBy := map[string]bool{}
	for i := range 8 {
		// The first scrape as Prometheus asks, parsed by the strict
		// OpenMetrics parser, which takes seconds a scrape under
		// -race; the others in the text format, which holds the same
		// series. New connections, so that both workers get to answer.
		accept := textAccept
		if i == 0 {
			accept = prometheusAccept
		}
		r := freshGet(t, s, "/metrics", "Accept", accept)
		sc := parseScrape(t, r)
		answeredBy[r.Header.Get("X-Worker-Id")] = true
		for _, family := range []string{"svc_inference_requests_total", "svc_model_load_seconds", "process_cpu_seconds_total", "go_goroutines"} {
			if got := sc.workersIn(family); !slices.Equal(got, []string{"1", "2"}) {
				t.Fatalf("%s: worker labels %v, want [1 2]\n%s", family, got, r.Body)
			}
		}
		sum := 0
		for _, id := range []string{"1", "2"} {
			got := int(sc.value(t, "svc_inference_requests_total", labels(id)))
			if got != served[id] {
				t.Errorf("worker %s: svc_inference_requests_total = %d, served %d", id, got, served[id])
			}
			if n := int(sc.value(t, "svc_inference_count_total", map[string]string{"worker": id})); n != served[id] {
				t.Errorf("worker %s: svc_inference_count_total = %d, served %d", id, n, served[id])
			}
			sum += got
		}
		if sum != total {
			t.Errorf("sum of svc_inference_requests_total = %d, sent %d", sum, total)
		}
	}
	t.Logf("scrapes answered by workers %v", answeredBy)
	st := statsOf(t, s.get("/v2/models/classifier/stats"))
	if got := successCount(t, st); got != total || int(st["inference_count"].(float64)) != total || st["version"] != "3" {
		t.Errorf("summed stats: %v, want %d successes", st, total)
	}
	// The controllers' decisions are each worker's own: one entry each.
	if tuning, _ := st["tuning"].([]any); len(tuning) != 2 ||
		tuning[0].(map[string]any)["worker"] != 1.0 || tuning[1].(map[string]any)["worker"] != 2.0 {
		t.Errorf("stats tuning under two workers: %v", st["tuning"])
	}
	var rec metricsRecord
	if r := s.get("/metrics"); r.Status != http.StatusOK || json.Unmarshal(r.Body, &rec) != nil || rec.Provider.Name != "CPUExecutionProvider" {
		t.Errorf("/metrics without Accept under workers: %d %s", r.Status, r.Body)
	}

	// A stopped worker accepts nothing, so worker 1 answers every request;
	// it leaves worker 2 out after its timeout and counts it.
	client.CloseIdleConnections()
	stopProcess(t, pids["2"])
	r := freshGet(t, s, "/metrics", "Accept", textAccept)
	sc := parseScrape(t, r)
	if r.Status != http.StatusOK || r.Header.Get("X-Worker-Id") != "1" {
		t.Fatalf("scrape while worker 2 is stopped: %d from worker %q", r.Status, r.Header.Get("X-Worker-Id"))
	}
	if got := sc.workersIn("svc_inference_requests_total"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("worker labels with worker 2 stopped: %v", got)
	}
	if n := sc.value(t, "svc_worker_scrape_failures_total", map[string]string{"peer": "2", "worker": "1"}); n < 1 {
		t.Errorf("svc_worker_scrape_failures_total{peer=2} = %v", n)
	}
	if got := successCount(t, statsOf(t, freshGet(t, s, "/v2/models/classifier/stats"))); got != served["1"] {
		t.Errorf("stats with worker 2 stopped: %d successes, worker 1 served %d", got, served["1"])
	}
	continueProcess(t, pids["2"])

	// A killed worker is left out until its replacement is ready; then
	// the replacement's series are back, from zero.
	if err := syscall.Kill(pids["2"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if r := freshGet(t, s, "/metrics", "Accept", prometheusAccept); r.Status != http.StatusOK {
		t.Fatalf("scrape after worker 2 was killed: %d %s", r.Status, r.Body)
	}
	s.waitRestart(2, 1)
	r = freshGet(t, s, "/metrics", "Accept", textAccept)
	sc = parseScrape(t, r)
	if got := sc.workersIn("svc_inference_requests_total"); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("worker labels after the restart: %v\n%s", got, r.Body)
	}
	if got := int(sc.value(t, "svc_inference_requests_total", labels("1"))); got != served["1"] {
		t.Errorf("worker 1 after the restart: %d, served %d", got, served["1"])
	}
	if got := int(sc.value(t, "svc_inference_requests_total", labels("2"))); got != 0 {
		t.Errorf("replacement worker 2: %d requests, want a fresh 0", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// Each worker's metrics and reload sockets, the supervisor's reload
	// socket: the replacement's in place of the killed worker's.
	if !slices.Equal(names, []string{"reload-1.sock", "reload-2.sock", "supervisor.sock", "worker-1.sock", "worker-2.sock"}) {
		t.Errorf("socket directory after the restart: %v", names)
	}

	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
	if _, err := os.Stat(filepath.Clean(dir)); !os.IsNotExist(err) {
		t.Errorf("socket directory %s left after shutdown: %v", dir, err)
	}
}
