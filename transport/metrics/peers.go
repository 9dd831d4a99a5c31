package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/svc-dev/svc/core/cache"
)

// Peers describe this worker's siblings under --workers, so that any worker
// can answer a scrape or a statistics request for all of them: each worker
// serves its own registry and statistics on a private Unix socket in Dir
// (SocketPath), and the worker that receives a request asks the others
// there and merges their answers with its own.
type Peers struct {
	// Dir holds the workers' sockets; it should be readable by this user
	// only (the sockets answer without credentials).
	Dir string
	// Self is this worker's id, Count the number of workers (ids 1..Count).
	Self, Count int
	// Timeout bounds how long a request waits for the siblings' answers
	// (DefaultPeerTimeout when 0); a sibling that has not answered by then
	// is left out of the answer and counted in
	// svc_worker_scrape_failures_total.
	Timeout time.Duration
}

// DefaultPeerTimeout is how long a scrape waits for the other workers.
const DefaultPeerTimeout = time.Second

// peerMaxBody bounds a sibling's answer.
const peerMaxBody = 64 << 20

// Paths on a worker's private socket.
const (
	peerPathMetrics = "/metrics"
	peerPathStats   = "/stats"
)

// SocketPath is the socket worker id serves its metrics on, in dir.
func SocketPath(dir string, id int) string {
	return filepath.Join(dir, "worker-"+strconv.Itoa(id)+".sock")
}

// peerFormat is the exposition the workers exchange: delimited protobuf,
// exact and cheap to decode.
var peerFormat = expfmt.NewFormat(expfmt.TypeProtoDelim)

// peerSet is the client side: the siblings' sockets.
type peerSet struct {
	p      Peers
	client *http.Client
	// failures counts siblings left out of an answer, by their id.
	failures *prometheus.CounterVec
}

func newPeerSet(p Peers) *peerSet {
	if p.Timeout <= 0 {
		p.Timeout = DefaultPeerTimeout
	}
	dir := p.Dir
	dialer := &net.Dialer{}
	tr := &http.Transport{
		// The host names a worker: "worker-2" dials worker 2's socket.
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			id, err := strconv.Atoi(strings.TrimPrefix(host, "worker-"))
			if err != nil {
				return nil, fmt.Errorf("peer address %q: %w", addr, err)
			}
			return dialer.DialContext(ctx, "unix", SocketPath(dir, id))
		},
		// A scrape comes every few seconds at most: a fresh connection
		// each time leaves no idle connection (and no goroutine) behind,
		// and never reuses one to a worker that has since been replaced.
		DisableKeepAlives:  true,
		DisableCompression: true,
	}
	return &peerSet{
		p:      p,
		client: &http.Client{Transport: tr},
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_worker_scrape_failures_total",
			Help: "Requests for metrics or statistics that left out another worker, because it did not answer in time (restarting, stopped or overloaded), by that worker's id (peer).",
		}, []string{"peer"}),
	}
}

// ask gets path from every sibling at once and returns the bodies by
// worker id; a sibling that fails or does not answer within the timeout is
// missing from the map and counted. It returns when every request has
// ended, at the latest at the timeout.
func (ps *peerSet) ask(ctx context.Context, path string, accept string) map[int][]byte {
	ctx, cancel := context.WithTimeout(ctx, ps.p.Timeout)
	defer cancel()
	var (
		mu  sync.Mutex
		out = map[int][]byte{}
		wg  sync.WaitGroup
	)
	for id := 1; id <= ps.p.Count; id++ {
		if id == ps.p.Self {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, err := ps.get(ctx, id, path, accept)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ps.failures.WithLabelValues(strconv.Itoa(id)).Inc()
				return
			}
			out[id] = body
		}()
	}
	wg.Wait()
	return out
}

func (ps *peerSet) get(ctx context.Context, id int, path, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://worker-"+strconv.Itoa(id)+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := ps.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("worker %d: %s", id, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, peerMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("worker %d: %w", id, err)
	}
	if len(body) > peerMaxBody {
		return nil, fmt.Errorf("worker %d: answer larger than %d bytes", id, peerMaxBody)
	}
	return body, nil
}

// decodeFamilies parses a sibling's delimited-protobuf exposition.
func decodeFamilies(body []byte) ([]*dto.MetricFamily, error) {
	dec := expfmt.NewDecoder(bytes.NewReader(body), peerFormat)
	var out []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, mf)
	}
}

// gatherAll is this worker's families merged with its siblings'. Every
// series carries its worker's label, so none collide; a sibling whose
// answer does not parse is left out and counted like one that did not
// answer.
func (m *Metrics) gatherAll(ctx context.Context) ([]*dto.MetricFamily, error) {
	bodies := m.peers.ask(ctx, peerPathMetrics, string(peerFormat))
	gs := prometheus.Gatherers{}
	for id, body := range bodies {
		mfs, err := decodeFamilies(body)
		if err != nil {
			m.peers.failures.WithLabelValues(strconv.Itoa(id)).Inc()
			continue
		}
		gs = append(gs, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, nil }))
	}
	// This worker's own families last, so that the failures counted above
	// are in this answer.
	gs = append(gs, m.Gatherer())
	return gs.Gather()
}

// snapshotAll is the statistics of every worker that answered, summed.
func (m *Metrics) snapshotAll(ctx context.Context) ModelStats {
	st := m.Snapshot()
	for id, body := range m.peers.ask(ctx, peerPathStats, "application/json") {
		var o ModelStats
		if err := json.Unmarshal(body, &o); err != nil {
			m.peers.failures.WithLabelValues(strconv.Itoa(id)).Inc()
			continue
		}
		st.add(o)
	}
	return st
}

// add sums o's counts and durations into s; the last inference is the
// later of the two, and s keeps its version unless it has none yet.
func (s *ModelStats) add(o ModelStats) {
	if s.Version == "" {
		s.Version = o.Version
	}
	s.LastInference = max(s.LastInference, o.LastInference)
	s.InferenceCount += o.InferenceCount
	s.ExecutionCount += o.ExecutionCount
	for _, d := range []struct{ to, from *Duration }{
		{&s.InferenceStats.Success, &o.InferenceStats.Success},
		{&s.InferenceStats.Fail, &o.InferenceStats.Fail},
		{&s.InferenceStats.Queue, &o.InferenceStats.Queue},
		{&s.InferenceStats.ComputeInfer, &o.InferenceStats.ComputeInfer},
	} {
		d.to.Count += d.from.Count
		d.to.Ns += d.from.Ns
	}
	if o.Sequences != nil {
		if s.Sequences == nil {
			s.Sequences = &SequenceStats{}
		}
		s.Sequences.add(o.Sequences)
	}
	if o.Cache != nil {
		if s.Cache == nil {
			s.Cache = &cache.Stats{}
		}
		s.Cache.Add(*o.Cache)
	}
	s.Tuning = append(s.Tuning, o.Tuning...)
	slices.SortFunc(s.Tuning, func(a, b Tuning) int { return a.Worker - b.Worker })
}

// PeerServer serves this worker's own registry and statistics on its
// private socket.
type PeerServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// ServePeers starts serving this worker's metrics on its socket in
// m's Peers.Dir; a socket left there by a worker this one replaces is
// removed first. Stop ends the server and removes the socket.
func (m *Metrics) ServePeers() (*PeerServer, error) {
	if m.peers == nil {
		return nil, errors.New("metrics: no peers configured")
	}
	path := SocketPath(m.peers.p.Dir, m.peers.p.Self)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale metrics socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("metrics socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+peerPathMetrics, func(w http.ResponseWriter, _ *http.Request) {
		mfs, err := m.Gatherer().Gather()
		if err != nil && len(mfs) == 0 {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", string(peerFormat))
		enc := expfmt.NewEncoder(w, peerFormat)
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("GET "+peerPathStats, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, m.Snapshot())
	})
	ps := &PeerServer{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(ps.done)
		_ = ps.srv.Serve(ln) // ends with Shutdown or Close
	}()
	return ps, nil
}

// Stop shuts the server down (closing the listener, which removes the
// socket file) and waits for it.
func (ps *PeerServer) Stop(ctx context.Context) error {
	err := ps.srv.Shutdown(ctx)
	if err != nil {
		_ = ps.srv.Close()
	}
	<-ps.done
	return err
}
