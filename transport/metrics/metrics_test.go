package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// fakeRunner stands for a loaded model of version "7".
type fakeRunner struct{}

func (fakeRunner) Info() core.ModelInfo { return core.ModelInfo{Name: "double", Version: "7"} }
func (fakeRunner) Specs() []tensor.Spec { return nil }
func (fakeRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return core.NewResult(nil), nil
}

// newLoaded returns metrics observing a model that has loaded.
func newLoaded(t *testing.T, o Options) (*Metrics, *core.Model) {
	t.Helper()
	model := core.NewModel("double")
	o.Model = model
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	model.SetObserver(m)
	model.Start(func() (core.Loaded, error) { return core.Loaded{Runner: fakeRunner{}}, nil }, []core.Preparer{m.Prepare}, nil, nil)
	<-model.Done()
	if err := model.Err(); err != nil {
		t.Fatal(err)
	}
	return m, model
}

// family returns the gathered family called name.
func family(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no family %s", name)
	return nil
}

// sample returns the metric of family name whose labels include want.
func sample(t *testing.T, m *Metrics, name string, want map[string]string) *dto.Metric {
	t.Helper()
	for _, mt := range family(t, m, name).GetMetric() {
		got := map[string]string{}
		for _, lp := range mt.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return mt
		}
	}
	t.Fatalf("%s has no series with %v", name, want)
	return nil
}

func TestObserverMovesMetrics(t *testing.T) {
	m, model := newLoaded(t, Options{})
	v := map[string]string{"model": "double", "version": "7"}
	with := func(k, val string) map[string]string {
		out := map[string]string{k: val}
		for a, b := range v {
			out[a] = b
		}
		return out
	}
	for _, o := range []core.Outcome{core.OutcomeSuccess, core.OutcomeSuccess, core.OutcomeSuccess, core.OutcomeBadRequest, core.OutcomeTimeout, core.OutcomeTimeout} {
		start := model.BeginRequest()
		model.EndRequest(start, o)
	}
	obs := model.Observer()
	obs.Queued(0)
	obs.Queued(3 * time.Millisecond)
	obs.Executed(4, 2*time.Millisecond)
	obs.Executed(1, 2*time.Millisecond)

	counters := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"svc_inference_requests_total", with("status", "success"), 3},
		{"svc_inference_requests_total", with("status", "failure"), 3},
		{"svc_inference_request_failures_total", with("reason", "bad_request"), 1},
		{"svc_inference_request_failures_total", with("reason", "timeout"), 2},
		{"svc_inference_request_failures_total", with("reason", "not_ready"), 0},
		{"svc_inference_count_total", v, 5},
		{"svc_inference_exec_count_total", v, 2},
	}
	for _, tt := range counters {
		if got := sample(t, m, tt.name, tt.labels).GetCounter().GetValue(); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	histograms := []struct {
		name   string
		labels map[string]string
		count  uint64
		sum    float64
	}{
		{"svc_inference_request_duration_seconds", with("status", "success"), 3, -1},
		{"svc_inference_request_duration_seconds", with("status", "failure"), 3, -1},
		{"svc_inference_queue_duration_seconds", v, 2, 0.003},
		{"svc_inference_compute_duration_seconds", v, 2, 0.004},
	}
	for _, tt := range histograms {
		h := sample(t, m, tt.name, tt.labels).GetHistogram()
		if h.GetSampleCount() != tt.count {
			t.Errorf("%s%v count = %d, want %d", tt.name, tt.labels, h.GetSampleCount(), tt.count)
		}
		if tt.sum >= 0 && h.GetSampleSum() != tt.sum {
			t.Errorf("%s%v sum = %v, want %v", tt.name, tt.labels, h.GetSampleSum(), tt.sum)
		}
	}
	if got := sample(t, m, "svc_model_load_seconds", v).GetGauge().GetValue(); got <= 0 {
		t.Errorf("svc_model_load_seconds = %v", got)
	}

	st := m.Snapshot()
	want := ModelStats{Name: "double", Version: "7", InferenceCount: 5, ExecutionCount: 2}
	if st.Name != want.Name || st.Version != want.Version || st.InferenceCount != 5 || st.ExecutionCount != 2 ||
		st.InferenceStats.Success.Count != 3 || st.InferenceStats.Fail.Count != 3 ||
		st.InferenceStats.Queue != (Duration{2, 3e6}) || st.InferenceStats.ComputeInfer != (Duration{2, 4e6}) || st.LastInference == 0 {
		t.Errorf("snapshot = %+v", st)
	}
}

func TestInFlightIsReadAtScrape(t *testing.T) {
	m, model := newLoaded(t, Options{})
	v := map[string]string{"model": "double", "version": "7"}
	a, b := model.BeginRequest(), model.BeginRequest()
	if got := sample(t, m, "svc_inference_in_flight", v).GetGauge().GetValue(); got != 2 {
		t.Errorf("in flight = %v, want 2", got)
	}
	model.EndRequest(a, core.OutcomeSuccess)
	model.EndRequest(b, core.OutcomeCanceled)
	if got := sample(t, m, "svc_inference_in_flight", v).GetGauge().GetValue(); got != 0 {
		t.Errorf("in flight = %v, want 0", got)
	}
}

// TestBeforeLoad: requests refused while loading count under version "";
// there is no load time yet.
func TestBeforeLoad(t *testing.T) {
	model := core.NewModel("double")
	m, err := New(Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	model.SetObserver(m)
	model.EndRequest(model.BeginRequest(), core.OutcomeNotReady)
	got := sample(t, m, "svc_inference_request_failures_total", map[string]string{"model": "double", "version": "", "reason": "not_ready"})
	if got.GetCounter().GetValue() != 1 {
		t.Errorf("not_ready = %v", got.GetCounter().GetValue())
	}
	if n := testutil.CollectAndCount(m.Registry(), "svc_model_load_seconds"); n != 0 {
		t.Errorf("svc_model_load_seconds has %d series while loading", n)
	}
}

func TestWorkerLabel(t *testing.T) {
	m, model := newLoaded(t, Options{Worker: 3})
	model.EndRequest(model.BeginRequest(), core.OutcomeSuccess)
	for _, name := range []string{"svc_inference_requests_total", "go_goroutines", "process_open_fds"} {
		for _, mt := range family(t, m, name).GetMetric() {
			found := false
			for _, lp := range mt.GetLabel() {
				found = found || (lp.GetName() == "worker" && lp.GetValue() == "3")
			}
			if !found {
				t.Errorf("%s: a series without worker=\"3\": %v", name, mt.GetLabel())
			}
		}
	}
}

// TestObserveAllocatesNothing: once loaded, observing is allocation-free.
// The count covers every goroutine, so it is taken with the garbage
// collector off: a collection would add what the runtime's cleanups
// allocate.
func TestObserveAllocatesNothing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	m, model := newLoaded(t, Options{})
	obs := model.Observer()
	allocs := testing.AllocsPerRun(100, func() {
		model.EndRequest(model.BeginRequest(), core.OutcomeSuccess)
		model.EndRequest(model.BeginRequest(), core.OutcomeInference)
		obs.Queued(time.Millisecond)
		obs.Executed(2, time.Millisecond)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	_ = m
}

// PrometheusAccept is the Accept header Prometheus sends when it scrapes.
const PrometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

func TestWantsExposition(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", false},
		{"application/*", false},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"not a media type", false},
		{PrometheusAccept, true},
		{"text/plain;version=0.0.4", true},
		{"text/plain", true},
		{"application/openmetrics-text; version=1.0.0", true},
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,*/*;q=0.1", true},
		{"application/vnd.google.protobuf", false},
		{"application/json, text/plain", false},
		{"application/json;q=0.5, text/plain", true},
		{"text/plain;q=0.5, */*", false},
		{"application/json;q=0, */*, text/plain;q=0.5", true},
	}
	for _, tt := range tests {
		var accept []string
		if tt.give != "" {
			accept = []string{tt.give}
		}
		if got := WantsExposition(accept); got != tt.want {
			t.Errorf("WantsExposition(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestMetricsNegotiation(t *testing.T) {
	m, model := newLoaded(t, Options{})
	model.EndRequest(model.BeginRequest(), core.OutcomeSuccess)
	const record = `{"provider":{}}`
	jsonHandler := transport.MetricsJSON(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(record))
	}))
	h := transport.NewRouter(m.Routes(jsonHandler), nil)
	tests := []struct {
		accept   string // "-": no header
		wantType string // prefix
	}{
		{"-", "application/json"},
		{"application/json", "application/json"},
		{"*/*", "application/json"},
		{PrometheusAccept, "application/openmetrics-text; version=1.0.0"},
		{"text/plain;version=0.0.4", "text/plain; version=0.0.4"},
		{"text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "text/plain; version=0.0.4"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tt.accept != "-" {
			req.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ct := rec.Header().Get("Content-Type")
		if rec.Code != 200 || !strings.HasPrefix(ct, tt.wantType) {
			t.Errorf("Accept %q: %d %q", tt.accept, rec.Code, ct)
			continue
		}
		if !strings.Contains(rec.Header().Get("Vary"), "Accept") {
			t.Errorf("Accept %q: no Vary: Accept", tt.accept)
		}
		body := rec.Body.String()
		if tt.wantType == "application/json" {
			if body != record {
				t.Errorf("Accept %q: body %q", tt.accept, body)
			}
		} else {
			if !strings.Contains(body, `svc_inference_requests_total{model="double",status="success",version="7"} 1`) {
				t.Errorf("Accept %q: exposition without the request counter:\n%s", tt.accept, body)
			}
			checkFamilies(t, body, rec.Header())
		}
	}

	// Without a JSON handler every request gets the exposition.
	rec := httptest.NewRecorder()
	transport.NewRouter(m.Routes(nil), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("no JSON handler: Content-Type %q", ct)
	}
}

// checkFamilies parses an exposition and checks that it holds the Go,
// process and svc families and that no two families share a name in
// OpenMetrics, where a counter's family name drops the _total suffix
// (strict OpenMetrics parsers reject a scrape that repeats one; the
// integration test parses a real scrape with one).
func checkFamilies(t *testing.T, body string, h http.Header) {
	t.Helper()
	format := expfmt.ResponseFormat(h)
	if format.FormatType() == expfmt.TypeOpenMetrics {
		// The strict parser is slow (seconds under -race): the text
		// form has the same families.
		return
	}
	dec := expfmt.NewDecoder(strings.NewReader(body), format)
	names := map[string]string{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse %s: %v", format, err)
		}
		name := mf.GetName()
		if mf.GetType() == dto.MetricType_COUNTER {
			name = strings.TrimSuffix(name, "_total")
		}
		if other, dup := names[name]; dup {
			t.Errorf("%s and %s are one OpenMetrics family", other, mf.GetName())
		}
		names[name] = mf.GetName()
	}
	for _, want := range []string{"go_goroutines", "go_memstats_alloc_bytes", "go_gc_heap_allocs_bytes", "process_open_fds", "svc_inference_in_flight", "svc_inference_requests"} {
		if _, ok := names[want]; !ok {
			t.Errorf("no %s in the exposition", want)
		}
	}
}

func TestStatsEndpoint(t *testing.T) {
	m, model := newLoaded(t, Options{})
	model.EndRequest(model.BeginRequest(), core.OutcomeSuccess)
	model.Observer().Queued(time.Microsecond)
	model.Observer().Executed(3, time.Millisecond)
	h := transport.NewRouter(m.Routes(nil), nil)
	tests := []struct {
		path   string
		status int
		error  string
	}{
		{"/v2/models/double/stats", 200, ""},
		{"/v2/models/double/versions/7/stats", 200, ""},
		{"/v2/models/other/stats", 404, "Request for unknown model: 'other' is not found"},
		{"/v2/models/double/versions/8/stats", 404, "Request for unknown model: 'double' version 8 is not found"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.status || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %s", tt.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			continue
		}
		if tt.status != 200 {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error != tt.error {
				t.Errorf("%s: body %s, want error %q", tt.path, rec.Body, tt.error)
			}
			continue
		}
		var got Stats
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v: %s", tt.path, err, rec.Body)
		}
		if len(got.ModelStats) != 1 {
			t.Fatalf("%s: %s", tt.path, rec.Body)
		}
		s := got.ModelStats[0]
		if s.Name != "double" || s.Version != "7" || s.InferenceCount != 3 || s.ExecutionCount != 1 ||
			s.InferenceStats.Success.Count != 1 || s.InferenceStats.Queue != (Duration{1, 1000}) || s.InferenceStats.ComputeInfer != (Duration{1, 1e6}) {
			t.Errorf("%s: %s", tt.path, rec.Body)
		}
	}
}

// BenchmarkObserveRequest is the metrics' cost per request: one request
// begun and ended, its queue wait and one execution.
func BenchmarkObserveRequest(b *testing.B) {
	model := core.NewModel("double")
	m, err := New(Options{Model: model})
	if err != nil {
		b.Fatal(err)
	}
	model.SetObserver(m)
	model.Start(func() (core.Loaded, error) { return core.Loaded{Runner: fakeRunner{}}, nil }, []core.Preparer{m.Prepare}, nil, nil)
	<-model.Done()
	obs := model.Observer()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := model.BeginRequest()
			obs.Queued(0)
			obs.Executed(1, time.Millisecond)
			model.EndRequest(start, core.OutcomeSuccess)
		}
	})
}

// TestBudgetSeries: the memory budget's figures, read at scrape time.
func TestBudgetSeries(t *testing.T) {
	m, _ := newLoaded(t, Options{Worker: 2})
	b := budget.New(1000, time.Nanosecond)
	if err := m.ObserveBudget(b); err != nil {
		t.Fatal(err)
	}
	ctx, end := b.Begin(context.Background())
	if err := budget.Reserve(ctx, 600, "x"); err != nil {
		t.Fatal(err)
	}
	if err := budget.Reserve(ctx, 600, "x"); err == nil {
		t.Fatal("a reservation over the budget was granted")
	}
	other, endOther := b.Begin(context.Background())
	if err := budget.Reserve(other, 500, "x"); err == nil {
		t.Fatal("a reservation of memory others hold was granted at once")
	}
	endOther()
	w := map[string]string{"worker": "2"}
	for name, want := range map[string]float64{
		"svc_request_memory_limit_bytes": 1000, "svc_request_memory_bytes": 600, "svc_request_memory_peak_bytes": 600,
		"svc_request_memory_reservations_total": 1, "svc_request_memory_waits_total": 1,
	} {
		mt := sample(t, m, name, w)
		if got := mt.GetGauge().GetValue() + mt.GetCounter().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for reason, want := range map[string]float64{"too_large": 1, "busy": 1} {
		if got := sample(t, m, "svc_request_memory_refused_total", map[string]string{"worker": "2", "reason": reason}).GetCounter().GetValue(); got != want {
			t.Errorf("refused %s = %v, want %v", reason, got, want)
		}
	}
	end()
	if got := sample(t, m, "svc_request_memory_bytes", w).GetGauge().GetValue(); got != 0 {
		t.Errorf("in use after the request = %v", got)
	}
}
