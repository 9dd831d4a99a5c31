package metrics

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core"
)

// workerLabels lists the worker label values among family name's series.
func workerLabels(t *testing.T, m *Metrics, name string) []string {
	t.Helper()
	mfs, err := m.gatherAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if lp.GetName() == "worker" && !slices.Contains(out, lp.GetValue()) {
					out = append(out, lp.GetValue())
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// answerTimeout is the peer timeout of the tests whose peers answer: far
// longer than an answer takes on a loaded machine, so that only a peer
// that cannot answer is left out.
const answerTimeout = time.Minute

// TestPeersMerge runs workers 1 and 2 of 4 in this process: worker 3 has
// no socket, worker 4's socket answers with something that is not an
// exposition. Worker 1's answers hold both live workers' series and sum
// their statistics; 3 and 4 are left out and counted.
func TestPeersMerge(t *testing.T) {
	dir := t.TempDir()
	var ms [2]*Metrics
	var models [2]*core.Model
	for i := range ms {
		ms[i], models[i] = newLoaded(t, Options{Worker: i + 1, Peers: &Peers{Dir: dir, Self: i + 1, Count: 4, Timeout: answerTimeout}})
		ps, err := ms[i].ServePeers()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ps.Stop(context.Background()) })
	}
	for i, n := range []int{3, 2} {
		for range n {
			models[i].EndRequest(models[i].BeginRequest(), core.OutcomeSuccess)
		}
	}
	models[1].Observer().Executed(2, time.Millisecond)

	junk, err := net.Listen("unix", SocketPath(dir, 4))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not protobuf")) })}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(junk) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })

	if got := workerLabels(t, ms[0], "svc_inference_requests_total"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("worker labels = %v, want [1 2]", got)
	}
	for _, peer := range []string{"3", "4"} {
		if n := sample(t, ms[0], "svc_worker_scrape_failures_total", map[string]string{"peer": peer, "worker": "1"}).GetCounter().GetValue(); n != 1 {
			t.Errorf("failures for worker %s = %v, want 1", peer, n)
		}
	}

	st := ms[0].snapshotAll(context.Background())
	if st.InferenceStats.Success.Count != 5 || st.InferenceCount != 2 || st.ExecutionCount != 1 || st.Version != "7" {
		t.Errorf("summed stats = %+v", st)
	}
}

// TestPeerServerStop: Stop ends the server and removes its socket; a stale
// socket of a replaced worker is replaced.
func TestPeerServerStop(t *testing.T) {
	dir := t.TempDir()
	path := SocketPath(dir, 2)
	if err := os.WriteFile(path, nil, 0o600); err != nil { // left by a killed worker
		t.Fatal(err)
	}
	m, _ := newLoaded(t, Options{Worker: 2, Peers: &Peers{Dir: dir, Self: 2, Count: 2, Timeout: answerTimeout}})
	ps, err := m.ServePeers()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newLoaded(t, Options{Worker: 1, Peers: &Peers{Dir: dir, Self: 1, Count: 2, Timeout: answerTimeout}})
	if got := workerLabels(t, other, "svc_inference_requests_total"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("worker labels = %v, want [1 2]", got)
	}
	if err := ps.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after Stop: %v", err)
	}
	if got := workerLabels(t, other, "svc_inference_requests_total"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("worker labels after worker 2 stopped = %v, want [1]", got)
	}
}

// TestPeersTimeout: a worker that accepts but never answers is left out
// once the timeout has passed.
func TestPeersTimeout(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", SocketPath(dir, 2)) // accepts (backlog), never reads
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	m, _ := newLoaded(t, Options{Worker: 1, Peers: &Peers{Dir: dir, Self: 1, Count: 2, Timeout: 50 * time.Millisecond}})
	if got := workerLabels(t, m, "svc_inference_requests_total"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("worker labels = %v, want [1]", got)
	}
	if n := sample(t, m, "svc_worker_scrape_failures_total", map[string]string{"peer": "2"}).GetCounter().GetValue(); n != 1 {
		t.Errorf("failures = %v, want 1", n)
	}
}

// TestServePeersFailureIsNotFatal: a socket that cannot be served (here, a
// directory that does not exist) is logged, and the worker starts and
// stops as usual.
func TestServePeersFailureIsNotFatal(t *testing.T) {
	m, _ := newLoaded(t, Options{Worker: 1, Peers: &Peers{Dir: filepath.Join(t.TempDir(), "gone"), Self: 1, Count: 2}})
	core, logs := observer.New(zapcore.WarnLevel)
	lc := fxtest.NewLifecycle(t)
	servePeers(lc, m, zap.New(core))
	lc.RequireStart().RequireStop()
	if logs.Len() != 1 || !strings.Contains(logs.All()[0].ContextMap()["error"].(string), "metrics socket") {
		t.Errorf("logs = %v", logs.All())
	}
}
