// Package metrics is svc's Prometheus instrumentation: a registry of its
// own (the Go and process collectors plus the inference metrics below),
// the core.RunObserver that feeds it, GET /metrics (the Prometheus or
// OpenMetrics exposition when a scraper asks for it, the specification's
// JSON record otherwise) and Triton-style statistics at
// GET /v2/models/{name}/stats. It is plumbing, not a protocol: it knows
// core's outcomes and no frontend's wire format.
//
// The metrics, each labelled model and version:
//
//	svc_inference_requests_total{status}        counter: inference requests by status (success, failure)
//	svc_inference_request_failures_total{reason} counter: failed requests by reason (bad_request, not_ready, timeout, inference, canceled)
//	svc_inference_request_duration_seconds{status} histogram: time from receiving a request to answering it
//	svc_inference_queue_duration_seconds        histogram: time a request waited for a session (0 when it ran at once)
//	svc_inference_compute_duration_seconds      histogram: time of each model execution
//	svc_inference_count_total                   counter: inferences run (rows: a batch of n counts n)
//	svc_inference_exec_count_total              counter: model executions; count/exec_count is the mean batch size
//	svc_inference_in_flight                     gauge: requests being served now
//	svc_inference_pending_requests              gauge: requests waiting in the batcher's queue now
//	svc_batch_size_limit                        gauge: rows a merged run may hold now (absent without batching)
//	svc_tuning_sessions                         gauge: runs that may be under way at once (the run slots)
//	svc_tuning_go_procs                         gauge: Go processors (GOMAXPROCS) now
//	svc_tuning_memory_released                  gauge: 1 while the reclaimer has given memory back and no request ended since
//	svc_model_load_seconds                      gauge: time loading, preparing and warming up the model took
//	svc_model_reloads_total{result}             counter: reloads of the model by result (success, failure); labelled model only
//
// A pipeline (the page reader) adds its stages' series (pipeline.go:
// Metrics.ObserveStages), labelled model and stage.
//
// The svc_batch_size_limit and svc_tuning_* gauges show the scheduler's
// self-tuning controllers' decisions as in force, also where svc.yml fixes
// them; they are absent until the model is ready.
//
// Version is "" for requests refused while the model was still loading
// (its version is not known before). Warm-up runs are not counted.
//
// With --workers N every worker process has its own registry, and each
// worker's series carry a worker label (Options.Worker), so that counters
// from different processes never mix into one series (Prometheus would
// read the jumps as resets). Each worker also serves its registry and
// statistics on a private Unix socket (Options.Peers, ServePeers); the
// worker that accepts a scrape asks the others there, at once and for at
// most Peers.Timeout, and answers with every worker's series (the Go and
// process collectors too, one set per worker). A worker that does not
// answer in time (restarting, stopped) is left out of that answer and
// counted:
//
//	svc_worker_scrape_failures_total{peer}      counter: answers that left out worker peer
//
// GET /v2/models/{name}/stats sums the statistics of the workers that
// answered (counts and durations added, the latest last_inference). The
// JSON record of GET /metrics holds no counters (the execution provider,
// the same in every worker) and is the receiving worker's.
package metrics

import (
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/cache"
	"github.com/svc-dev/svc/core/seq"
)

// Buckets are the duration histograms' upper bounds, in seconds: from
// 100µs (a small model's run) to 10s.
var Buckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Options configure Metrics.
type Options struct {
	// Model is the served model.
	Model *core.Model
	// Worker is the worker process's id under --workers (0: not a
	// worker); it becomes the worker label of every series.
	Worker int
	// Peers, under --workers, are the other workers whose metrics and
	// statistics this worker's answers include (nil: this process's only).
	Peers *Peers
	// CPUs are the cores the worker is pinned to, as the statistics'
	// tuning shows them ("": unpinned; runtime.cpu_affinity).
	CPUs string
}

// Metrics holds the registry and observes the model's work. Its methods
// are safe for concurrent use; observing allocates nothing once the model
// has loaded.
type Metrics struct {
	model  *core.Model
	reg    *prometheus.Registry
	peers  *peerSet // nil: not a worker
	worker int      // the worker's id (0: not a worker)
	cpus   string   // the cores the worker is pinned to ("": unpinned)

	requests   *prometheus.CounterVec
	failures   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	queue      *prometheus.HistogramVec
	compute    *prometheus.HistogramVec
	inferences *prometheus.CounterVec
	executions *prometheus.CounterVec

	// bound holds the series of the loaded model's version (nil before
	// Prepare).
	bound atomic.Pointer[series]
	// early holds the series of version "", made on the first request
	// refused while loading.
	early     *series
	earlyOnce sync.Once
	stats     stats
	// seqs is the store of sequences (nil: none; sequence.go).
	seqs *seq.Store
	// cache is the model's response cache (nil: none; cache.go).
	cache *cache.Cache
}

// series are the children of the vectors for one model version, looked
// up once.
type series struct {
	version    string
	requests   [2]prometheus.Counter  // success, failure
	failures   []prometheus.Counter   // by core.Outcome
	duration   [2]prometheus.Observer // success, failure
	queue      prometheus.Observer
	compute    prometheus.Observer
	inferences prometheus.Counter
	executions prometheus.Counter
}

// stats are the running totals behind the Triton-style statistics.
type stats struct {
	successCount, successNs atomic.Uint64
	failCount, failNs       atomic.Uint64
	queueCount, queueNs     atomic.Uint64
	computeCount, computeNs atomic.Uint64
	inferences, executions  atomic.Uint64
	lastInferenceMs         atomic.Int64
	stepCount, stepNs       atomic.Uint64
}

var _ core.RunObserver = (*Metrics)(nil)

var labels = []string{"model", "version"}

// New builds the registry with the Go and process collectors and the
// inference metrics of o.Model.
func New(o Options) (*Metrics, error) {
	m := &Metrics{model: o.Model, reg: prometheus.NewRegistry(), worker: o.Worker, cpus: o.CPUs}
	if o.Model != nil {
		o.Model.OnSwap(m.follow)
	}
	var reg prometheus.Registerer = m.reg
	if o.Worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(o.Worker)}, reg)
	}
	with := func(extra ...string) []string { return append(append([]string{}, labels...), extra...) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_inference_requests_total",
		Help: "Inference requests answered, by status (success or failure).",
	}, with("status"))
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_inference_request_failures_total",
		Help: "Failed inference requests, by reason (bad_request, not_ready, timeout, inference, canceled).",
	}, with("reason"))
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_inference_request_duration_seconds",
		Help:    "Time from receiving an inference request to answering it, by status.",
		Buckets: Buckets,
	}, with("status"))
	m.queue = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_inference_queue_duration_seconds",
		Help:    "Time an inference request waited for a session (0 when it ran at once).",
		Buckets: Buckets,
	}, labels)
	m.compute = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_inference_compute_duration_seconds",
		Help:    "Time of each model execution in ONNX Runtime.",
		Buckets: Buckets,
	}, labels)
	m.inferences = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_inference_count_total",
		Help: "Inferences run by successful executions: a batch of n rows counts n.",
	}, labels)
	m.executions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_inference_exec_count_total",
		Help: "Successful model executions; svc_inference_count_total over this is the mean batch size.",
	}, labels)
	for _, c := range []prometheus.Collector{
		// The classic go_memstats_* set, plus /gc/heap/allocs:bytes as
		// go_gc_heap_allocs_bytes_total: the same figure as
		// go_memstats_alloc_bytes_total, which Gatherer leaves out.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/allocs:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.failures, m.duration, m.queue, m.compute, m.inferences, m.executions,
		&stateCollector{m: m},
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	if o.Peers != nil && o.Peers.Count > 1 && o.Worker > 0 {
		m.peers = newPeerSet(*o.Peers)
		if err := reg.Register(m.peers.failures); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Registry is the registry every metric is in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// clashing is left out of the exposition: in OpenMetrics, the Go
// collector's counter go_memstats_alloc_bytes_total and its gauge
// go_memstats_alloc_bytes are one family name (the _total suffix is the
// counter's), so strict parsers reject the scrape (client_golang issue
// 829). go_gc_heap_allocs_bytes_total carries the same value.
const clashing = "go_memstats_alloc_bytes_total"

// Gatherer is what GET /metrics exposes: the registry without clashing.
func (m *Metrics) Gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := m.reg.Gather()
		return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == clashing }), err
	})
}

// Prepare makes the series of a loaded generation's version; they are
// bound when the generation becomes current (a reload may change the
// version). It is a core.Preparer.
func (m *Metrics) Prepare(r core.Runner) (any, error) {
	return m.bind(r.Info().Version), nil
}

// follow binds the series of each generation as it becomes current.
func (m *Metrics) follow(g *core.Generation) {
	if s, ok := core.ViewOf[*series](g); ok {
		m.bound.Store(s)
	}
}

// bind looks up (and so creates, at zero) every series of version.
func (m *Metrics) bind(version string) *series {
	name := m.model.Name()
	s := &series{version: version, failures: make([]prometheus.Counter, len(core.Outcomes()))}
	for i, status := range []string{"success", "failure"} {
		s.requests[i] = m.requests.WithLabelValues(name, version, status)
		s.duration[i] = m.duration.WithLabelValues(name, version, status)
	}
	for _, o := range core.Outcomes()[1:] {
		s.failures[o] = m.failures.WithLabelValues(name, version, o.String())
	}
	s.queue = m.queue.WithLabelValues(name, version)
	s.compute = m.compute.WithLabelValues(name, version)
	s.inferences = m.inferences.WithLabelValues(name, version)
	s.executions = m.executions.WithLabelValues(name, version)
	return s
}

// current is the bound series, or those of version "" before the model has
// loaded (only refused requests are counted then).
func (m *Metrics) current() *series {
	if s := m.bound.Load(); s != nil {
		return s
	}
	m.earlyOnce.Do(func() { m.early = m.bind("") })
	return m.early
}

// RequestDone counts a request and its duration.
func (m *Metrics) RequestDone(o core.Outcome, d time.Duration) {
	s := m.current()
	ns := uint64(max(d, 0))
	m.stats.lastInferenceMs.Store(time.Now().UnixMilli())
	if o == core.OutcomeSuccess {
		s.requests[0].Inc()
		s.duration[0].Observe(d.Seconds())
		m.stats.successCount.Add(1)
		m.stats.successNs.Add(ns)
		return
	}
	s.requests[1].Inc()
	s.duration[1].Observe(d.Seconds())
	if int(o) < len(s.failures) && s.failures[o] != nil {
		s.failures[o].Inc()
	} else {
		s.failures[core.OutcomeInference].Inc()
	}
	m.stats.failCount.Add(1)
	m.stats.failNs.Add(ns)
}

// Queued observes a request's wait for a session.
func (m *Metrics) Queued(d time.Duration) {
	m.current().queue.Observe(d.Seconds())
	m.stats.queueCount.Add(1)
	m.stats.queueNs.Add(uint64(max(d, 0)))
}

// Executed counts a model execution and its inferences.
func (m *Metrics) Executed(inferences int, d time.Duration) {
	s := m.current()
	s.compute.Observe(d.Seconds())
	s.executions.Inc()
	s.inferences.Add(float64(inferences))
	m.stats.executions.Add(1)
	m.stats.inferences.Add(uint64(inferences))
	m.stats.computeCount.Add(1)
	m.stats.computeNs.Add(uint64(max(d, 0)))
}

// stateCollector reads the model's state at scrape time: requests in
// flight, the batcher's queue, the load time.
type stateCollector struct{ m *Metrics }

var (
	inFlightDesc = prometheus.NewDesc("svc_inference_in_flight",
		"Inference requests being served now.", labels, nil)
	pendingDesc = prometheus.NewDesc("svc_inference_pending_requests",
		"Inference requests waiting in the batcher's queue now (0 without batching).", labels, nil)
	limitDesc = prometheus.NewDesc("svc_batch_size_limit",
		"Rows a merged run may hold now: batching.max_batch_size, or what adaptive batching has learnt (absent without batching).", labels, nil)
	sessionsDesc = prometheus.NewDesc("svc_tuning_sessions",
		"Runs of the model that may be under way at once: the run slots (the cores over runtime.intra_op_threads, at least one per session).", labels, nil)
	procsDesc = prometheus.NewDesc("svc_tuning_go_procs",
		"Go processors (GOMAXPROCS) now: tuned to the length of the model's runs, or fixed by runtime.go_procs or GOMAXPROCS.", labels, nil)
	releasedDesc = prometheus.NewDesc("svc_tuning_memory_released",
		"1 while the idle reclaimer has given memory back and no request has ended since (runtime.release_memory_after), else 0.", labels, nil)
	loadDesc = prometheus.NewDesc("svc_model_load_seconds",
		"Time loading, preparing and warming up the model took (absent until it has loaded).", labels, nil)
	reloadsDesc = prometheus.NewDesc("svc_model_reloads_total",
		"Reloads of the model, by result: success (the new version serves) or failure (the previous one keeps serving).", []string{"model", "result"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- inFlightDesc
	ch <- pendingDesc
	ch <- limitDesc
	ch <- sessionsDesc
	ch <- procsDesc
	ch <- releasedDesc
	ch <- loadDesc
	ch <- reloadsDesc
}

// readyStats is the scheduler's state once the model takes inferences.
func readyStats(m *core.Model) (core.SchedStats, bool) {
	if _, err := m.Runner(); err != nil {
		return core.SchedStats{}, false
	}
	return m.Stats()
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	model := c.m.model
	name, version := model.Name(), ""
	if s := c.m.bound.Load(); s != nil {
		version = s.version
	}
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(model.InFlight()), name, version)
	var pending int
	if st, ok := readyStats(model); ok {
		pending = st.Queued
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name, version)
		}
		if st.BatchLimit > 0 {
			gauge(limitDesc, float64(st.BatchLimit))
		}
		gauge(sessionsDesc, float64(st.Sessions))
		gauge(procsDesc, float64(st.GoProcs))
		released := 0.0
		if st.MemoryReleased {
			released = 1
		}
		gauge(releasedDesc, released)
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(pending), name, version)
	if t := model.LoadTime(); t > 0 && model.Err() == nil {
		ch <- prometheus.MustNewConstMetric(loadDesc, prometheus.GaugeValue, t.Seconds(), name, version)
	}
	rs := model.ReloadStatus()
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(rs.Succeeded), name, "success")
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(rs.Failed), name, "failure")
}

// Registerer is where other modules register their series: the registry,
// with the worker label under --workers.
func (m *Metrics) Registerer() prometheus.Registerer {
	if m.worker > 0 {
		return prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, m.reg)
	}
	return m.reg
}
