//go:build linux

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// onWorker runs f while worker id alone takes connections: the others are
// stopped (SIGSTOP) meanwhile, so that each request f sends on a new
// connection is that worker's.
func onWorker(t *testing.T, pids map[string]int, id string, f func()) {
	t.Helper()
	for other, pid := range pids {
		if other != id {
			stopProcess(t, pid)
		}
	}
	defer func() {
		for other, pid := range pids {
			if other != id {
				continueProcess(t, pid)
			}
		}
	}()
	f()
}

// readEventFile reads a file sink's events: their type and id, each with
// its data.
func readEventFile(t *testing.T, path string) []cloudevents.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudevents.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		e := cloudevents.NewEvent()
		if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, sc.Text())
		}
		out = append(out, e)
	}
	return out
}

// TestPayloadLoggerWorkers: under --workers 2 a file sink writes one file
// per worker (payloads.w1.jsonl, payloads.w2.jsonl), each with the events
// of the requests its worker answered, and together they hold every
// request and response exactly once, as the clients sent and got them
// (JSON compacted, as a file sink writes it).
func TestPayloadLoggerWorkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + loggerKey}, "iris", "--workers", "2",
		"--config", loggerConfig(t, "{url: 'file://"+filepath.Join(dir, "payloads.jsonl")+"'}"))
	pids := s.workerPids(t)
	sent := map[string]logged{}
	byWorker := map[string]string{} // request id: the worker that answered
	ask := func(id string, i int) {
		body := fmt.Appendf(nil, `{"input": [[5.9, 3.0, 4.2, %d]]}`, i)
		r := freshDo(t, s, http.MethodPost, "/predict", bytes.NewReader(body), "Content-Type", "application/json",
			"X-Request-ID", id, "Authorization", "Bearer "+loggerKey)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", id, r.Status, r.Body)
		}
		// A file sink writes a JSON body as its line's data, compacted.
		var req, resp bytes.Buffer
		if err := json.Compact(&req, body); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&resp, r.Body); err != nil {
			t.Fatalf("%s: %v %s", id, err, r.Body)
		}
		sent[id] = logged{reqType: "application/json", req: req.Bytes(), respType: r.Header.Get("Content-Type"), resp: resp.Bytes()}
		byWorker[id] = r.Header.Get("X-Worker-Id")
	}
	const each = 6
	for _, w := range []string{"1", "2"} {
		onWorker(t, pids, w, func() {
			for i := range each {
				id := fmt.Sprintf("on-w%s-%d", w, i)
				ask(id, i)
				if byWorker[id] != w {
					t.Errorf("%s answered by worker %q, with worker %s alone", id, byWorker[id], w)
				}
			}
		})
	}
	// Both take connections: the kernel picks.
	for i := range each {
		ask(fmt.Sprint("any-", i), i)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("svc exited %d", code)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	want := []string{filepath.Join(dir, "payloads.w1.jsonl"), filepath.Join(dir, "payloads.w2.jsonl")}
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	seen := map[string]int{}
	for i, f := range files {
		w := fmt.Sprint(i + 1)
		for _, e := range readEventFile(t, f) {
			key := e.Type() + " " + e.ID()
			seen[key]++
			l, ok := sent[e.ID()]
			if !ok || byWorker[e.ID()] != w {
				t.Errorf("%s: event %s: sent %v, answered by worker %q", f, key, ok, byWorker[e.ID()])
				continue
			}
			checkData(t, key, e, l, e.Type() == "org.kubeflow.serving.inference.request")
		}
	}
	for id := range sent {
		for _, typ := range []string{"org.kubeflow.serving.inference.request", "org.kubeflow.serving.inference.response"} {
			if n := seen[typ+" "+id]; n != 1 {
				t.Errorf("%s %s in the files %d times, want once", typ, id, n)
			}
		}
	}
	if len(seen) != 2*len(sent) {
		t.Errorf("%d events, want %d", len(seen), 2*len(sent))
	}
}

// TestResponseCacheWorkers: under --workers 2 each worker has a cache of
// its own (a request answered by one worker is a miss on the other), and
// /v2/models/{name}/stats and /metrics sum the workers' figures, /metrics
// with each worker's series labelled.
func TestResponseCacheWorkers(t *testing.T) {
	t.Parallel()
	s := startServer(t, "iris", "--workers", "2", "--config", cacheConfig(t, "{size: 1MiB}"))
	pids := s.workerPids(t)
	ask := func(body string) (cache, worker string) {
		r := freshDo(t, s, http.MethodPost, "/v2/models/iris/infer", bytes.NewReader([]byte(body)), "Content-Type", "application/json")
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-Cache"), r.Header.Get("X-Worker-Id")
	}
	_, st0 := modelCacheStats(t, s, "iris")
	// Worker 1 answers the flower twice and another once, then worker 2
	// the flower twice: each worker's cache misses it first.
	other := `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[6.7,3.0,5.2,2.3]}]}`
	steps := []struct {
		worker, body, want string
	}{
		{"1", v2Body(""), "miss"}, {"1", v2Body(""), "hit"}, {"1", other, "miss"},
		{"2", v2Body(""), "miss"}, {"2", v2Body(""), "hit"}, {"2", v2Body(""), "hit"},
	}
	for i, st := range steps {
		onWorker(t, pids, st.worker, func() {
			if x, w := ask(st.body); x != st.want || w != st.worker {
				t.Errorf("request %d: X-Cache %q from worker %q, want %q from worker %s", i, x, w, st.want, st.worker)
			}
		})
	}
	// Per worker: hits, misses, entries.
	want := map[string][3]float64{"1": {1, 2, 2}, "2": {2, 1, 1}}
	_, st := modelCacheStats(t, s, "iris")
	if st["hits"]-st0["hits"] != 3 || st["misses"]-st0["misses"] != 3 || st["entries"] != 3 || st["bytes"] <= 0 {
		t.Errorf("summed cache stats %v (before %v): want 3 hits, 3 misses, 3 entries", st, st0)
	}
	sc := parseScrape(t, freshGet(t, s, "/metrics", "Accept", textAccept))
	var bytesSum float64
	for w, v := range want {
		lw := map[string]string{"worker": w}
		if h, m := sc.value(t, "svc_cache_hits_total", lw), sc.value(t, "svc_cache_misses_total", lw); h != v[0] || m != v[1] {
			t.Errorf("worker %s: svc_cache_hits_total %v, svc_cache_misses_total %v; want %v, %v", w, h, m, v[0], v[1])
		}
		bytesSum += sc.value(t, "svc_cache_bytes", lw)
	}
	if bytesSum != st["bytes"] {
		t.Errorf("svc_cache_bytes sum to %v, the stats say %v", bytesSum, st["bytes"])
	}
}
