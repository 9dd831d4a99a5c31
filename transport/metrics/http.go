package metrics

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/svc-dev/svc/core/cache"
	"github.com/svc-dev/svc/transport"
)

// The paths this package serves.
const (
	PathMetrics      = "/metrics"
	PathStats        = "/v2/models/{name}/stats"
	PathVersionStats = "/v2/models/{name}/versions/{version}/stats"
)

// Routes are GET /metrics (the exposition for scrapers, json for everyone
// else; nil json: the exposition always) and the Triton-style statistics.
func (m *Metrics) Routes(json transport.MetricsJSON) []transport.Route {
	get := []string{http.MethodGet}
	return []transport.Route{
		{Methods: get, Path: PathMetrics, Purpose: "Provider information", Order: 40, Handler: m.MetricsHandler(json)},
		{Methods: get, Path: PathStats, Purpose: "Model statistics (Triton JSON)", Order: 240, Handler: http.HandlerFunc(m.serveStats)},
		{Methods: get, Path: PathVersionStats, Handler: http.HandlerFunc(m.serveStats)},
	}
}

// MetricsHandler serves GET /metrics: the Prometheus text or OpenMetrics
// exposition when the Accept header prefers one of the exposition formats
// (as Prometheus' scrape header does), json otherwise: without an Accept
// header, for application/json, */* and anything else.
func (m *Metrics) MetricsHandler(json transport.MetricsJSON) http.Handler {
	opts := promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}
	expo := promhttp.HandlerFor(m.Gatherer(), opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if json == nil || WantsExposition(r.Header.Values("Accept")) {
			if m.peers != nil {
				// Every worker's series: the gatherer asks the others
				// within this request's context.
				all := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return m.gatherAll(r.Context()) })
				promhttp.HandlerFor(all, opts).ServeHTTP(w, r)
				return
			}
			expo.ServeHTTP(w, r) // adds Vary: Accept itself
			return
		}
		w.Header().Add("Vary", "Accept")
		json.ServeHTTP(w, r)
	})
}

// WantsExposition reports whether Accept header values prefer a Prometheus
// exposition format (application/openmetrics-text, text/plain, or the
// delimited protobuf of io.prometheus.client.MetricFamily) to JSON. Each
// format's weight is the q of the most specific range that matches it
// (application/json, application/*, */* for JSON; the exact type for the
// exposition); JSON wins ties, so that no Accept, */* and malformed headers
// get the specification's record.
func WantsExposition(accept []string) bool {
	qJSON, jsonSpec := 0.0, -1
	qExpo := 0.0
	for _, header := range accept {
		for _, part := range strings.Split(header, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v <= 1 {
					q = v
				}
			}
			switch mt {
			case "application/openmetrics-text", "text/plain":
				qExpo = max(qExpo, q)
			case "application/vnd.google.protobuf":
				if params["proto"] == "io.prometheus.client.MetricFamily" {
					qExpo = max(qExpo, q)
				}
			}
			spec := -1
			switch mt {
			case "application/json":
				spec = 2
			case "application/*":
				spec = 1
			case "*/*":
				spec = 0
			}
			if spec > jsonSpec || (spec == jsonSpec && spec >= 0 && q > qJSON) {
				qJSON, jsonSpec = q, spec
			}
		}
	}
	if jsonSpec < 0 {
		// Nothing names JSON: the exposition if it was asked for.
		return qExpo > 0
	}
	return qExpo > qJSON
}

// Stats is the Triton-style statistics response.
type Stats struct {
	ModelStats []ModelStats `json:"model_stats"`
}

// ModelStats are one model version's statistics.
type ModelStats struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// LastInference is when the last request ended, in milliseconds since
	// the epoch (0: none yet).
	LastInference int64 `json:"last_inference"`
	// InferenceCount counts inferences (rows) of successful executions;
	// ExecutionCount the executions.
	InferenceCount uint64         `json:"inference_count"`
	ExecutionCount uint64         `json:"execution_count"`
	InferenceStats InferenceStats `json:"inference_stats"`
	// Tuning holds what the scheduler's self-tuning controllers have
	// decided, one entry per process that answered (one per worker under
	// --workers), in worker order; absent until the model is ready.
	Tuning []Tuning `json:"tuning,omitempty"`
	// Sequences are the figures of sequences with implicit state, for a
	// stateful model (sequence.go).
	Sequences *SequenceStats `json:"sequence_stats,omitempty"`
	// Cache are the response cache's figures, for a model with one
	// (models.NAME.cache; summed over the workers under --workers).
	Cache *cache.Stats `json:"cache_stats,omitempty"`
}

// Tuning is one process's controller decisions, as in force now: the
// values of the svc_batch_size_limit and svc_tuning_* gauges.
type Tuning struct {
	// Worker is the worker process's id (absent without --workers).
	Worker int `json:"worker,omitempty"`
	// BatchSizeLimit is the most rows a merged run may hold (0 without
	// batching).
	BatchSizeLimit int `json:"batch_size_limit"`
	// Sessions is how many runs may be under way at once.
	Sessions int `json:"sessions"`
	// GoProcs is the number of Go processors.
	GoProcs int `json:"go_procs"`
	// MemoryReleased: the idle reclaimer has given memory back and no
	// request has ended since.
	MemoryReleased bool `json:"memory_released"`
	// CPUs are the cores the worker is pinned to, as a list of cores and
	// ranges ("0-1,4"; runtime.cpu_affinity; absent when unpinned).
	CPUs string `json:"cpus,omitempty"`
}

// InferenceStats are counts and cumulative durations.
type InferenceStats struct {
	// Success and Fail: requests and their whole duration.
	Success Duration `json:"success"`
	Fail    Duration `json:"fail"`
	// Queue: requests that got a session, and their wait.
	Queue Duration `json:"queue"`
	// ComputeInfer: model executions, and their time.
	ComputeInfer Duration `json:"compute_infer"`
}

// Duration is a count and a cumulative duration in nanoseconds.
type Duration struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

// Snapshot returns this process's statistics so far (under --workers,
// this worker's alone).
func (m *Metrics) Snapshot() ModelStats {
	s := &m.stats
	ms := ModelStats{
		Name:           m.model.Name(),
		LastInference:  s.lastInferenceMs.Load(),
		InferenceCount: s.inferences.Load(),
		ExecutionCount: s.executions.Load(),
		InferenceStats: InferenceStats{
			Success:      Duration{s.successCount.Load(), s.successNs.Load()},
			Fail:         Duration{s.failCount.Load(), s.failNs.Load()},
			Queue:        Duration{s.queueCount.Load(), s.queueNs.Load()},
			ComputeInfer: Duration{s.computeCount.Load(), s.computeNs.Load()},
		},
	}
	if b := m.bound.Load(); b != nil {
		ms.Version = b.version
	}
	ms.Sequences = m.sequenceSnapshot()
	ms.Cache = m.cacheSnapshot()
	if st, ok := readyStats(m.model); ok {
		ms.Tuning = []Tuning{{Worker: m.worker, BatchSizeLimit: st.BatchLimit, Sessions: st.Sessions, GoProcs: st.GoProcs, MemoryReleased: st.MemoryReleased, CPUs: m.cpus}}
	}
	return ms
}

func (m *Metrics) serveStats(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	name, version := vars["name"], vars["version"]
	if name != m.model.Name() {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Request for unknown model: '%s' is not found", name))
		return
	}
	st := m.Snapshot()
	if m.peers != nil {
		st = m.snapshotAll(r.Context())
	}
	if _, hasVersion := vars["version"]; hasVersion && version != st.Version {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Request for unknown model: '%s' version %s is not found", name, version))
		return
	}
	writeJSON(w, http.StatusOK, Stats{ModelStats: []ModelStats{st}})
}

// writeError writes the v2 error body {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encode statistics"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
