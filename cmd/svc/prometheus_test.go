package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// prometheusAccept is the Accept header Prometheus sends when it scrapes.
const prometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// textAccept asks /metrics for Prometheus's classic text format, for the
// tests that read values rather than check the format: it parses in about
// a millisecond, where expfmt's OpenMetrics parser takes most of a second
// over svc's exposition.
const textAccept = "text/plain;version=0.0.4"

// scrape is one parsed exposition.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics scrapes /metrics as Prometheus does and parses the answer
// with the format the response declares.
func scrapeMetrics(t *testing.T, s *server, accept string) (scrape, response) {
	t.Helper()
	r := s.do(http.MethodGet, "/metrics", "", nil, "Accept", accept)
	if r.Status != http.StatusOK {
		t.Fatalf("scrape: %d %s", r.Status, r.Body)
	}
	return parseScrape(t, r), r
}

// parseScrape parses an exposition with the format its response declares.
func parseScrape(t *testing.T, r response) scrape {
	t.Helper()
	format := expfmt.ResponseFormat(r.Header)
	dec := expfmt.NewDecoder(bytes.NewReader(r.Body), format)
	out := scrape{}
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse the scrape (%s): %v\n%s", format, err, r.Body)
		}
		out[strings.TrimSuffix(mf.GetName(), "_total")] = mf
	}
	return out
}

// value returns the value of the series of family name whose labels include
// want (counter, gauge, or a histogram's sample count); absent series are
// 0, as they are to Prometheus before their first increment.
func (sc scrape) value(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	mf, ok := sc[strings.TrimSuffix(name, "_total")]
	if !ok {
		t.Fatalf("the scrape has no %s", name)
	}
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// sum adds up the values of family name's series (0 without any).
func (sc scrape) sum(name string) float64 {
	total := 0.0
	for _, m := range sc[strings.TrimSuffix(name, "_total")].GetMetric() {
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return total
}

// TestPrometheusScrape sends successful and failed /predict requests and
// checks that a Prometheus scrape sees the counters move, the batch figures
// agree, /metrics still answers the spec's JSON to everyone else, and the
// Triton statistics agree with the scrape.
func TestPrometheusScrape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model, version string
		ok             []string
		rows           float64 // rows in the ok requests
		batched        bool
		fail           map[string][]string // by reason
		// accept is the scrape's Accept header after the requests: the
		// real Prometheus header once (its OpenMetrics answer goes through
		// the strict parser, which takes seconds), the text format else.
		accept string
	}{
		{
			model: "classifier", version: "3",
			ok: []string{
				`{"input": [[1, 2, 3, 4]]}`, `{"input": [[5, 1, 0.5, 2]]}`, `{"input": [[0, 0, 0, 0]]}`,
				`{"input": [[1, 1, 1, 1], [2, 2, 2, 2]]}`, `{"input": [[6, 3, 4.5, 1.5], [1, 1, 1, 1], [2, 2, 2, 2]]}`,
			},
			rows: 8, batched: true, accept: prometheusAccept,
			fail: map[string][]string{"bad_request": {`{"input": "x"}`, `{"wrong": [[1, 2, 3, 4]]}`, `not json`}},
		},
		{
			model: "failing", version: "1",
			ok:   []string{`{"x": [1, 2, 3, 4, 5, 6]}`, `{"x": [6, 5, 4, 3, 2, 1]}`},
			rows: 2, accept: "text/plain;version=0.0.4",
			fail: map[string][]string{
				"inference":   {`{"x": [1, 2, 3, 4]}`, `{"x": [1]}`},
				"bad_request": {`{"x": "a"}`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			s := startServer(t, model(tt.model+".onnx"))
			// The text format here; the OpenMetrics parser is strict but
			// slow, one scrape with it is enough.
			before, _ := scrapeMetrics(t, s, "text/plain;version=0.0.4")
			for _, body := range tt.ok {
				if r := s.predict(body); r.Status != http.StatusOK {
					t.Fatalf("predict %s: %d %s", body, r.Status, r.Body)
				}
			}
			failures, reached := 0, len(tt.ok)
			for reason, bodies := range tt.fail {
				for _, body := range bodies {
					if r := s.predict(body); r.Status < 400 {
						t.Fatalf("predict %s (%s): %d %s", body, reason, r.Status, r.Body)
					}
				}
				failures += len(bodies)
				if reason == "inference" {
					reached += len(bodies)
				}
			}
			after, r := scrapeMetrics(t, s, tt.accept)
			if ct := r.Header.Get("Content-Type"); tt.accept == prometheusAccept && !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
				t.Errorf("scrape Content-Type = %q, want OpenMetrics 1.0.0", ct)
			}

			mv := map[string]string{"model": tt.model, "version": tt.version}
			with := func(k, v string) map[string]string {
				out := map[string]string{k: v}
				for a, b := range mv {
					out[a] = b
				}
				return out
			}
			delta := func(name string, labels map[string]string) float64 {
				return after.value(t, name, labels) - before.value(t, name, labels)
			}
			checks := []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"svc_inference_requests_total", with("status", "success"), float64(len(tt.ok))},
				{"svc_inference_requests_total", with("status", "failure"), float64(failures)},
				{"svc_inference_request_duration_seconds", with("status", "success"), float64(len(tt.ok))},
				{"svc_inference_request_duration_seconds", with("status", "failure"), float64(failures)},
				{"svc_inference_queue_duration_seconds", mv, float64(reached)},
				{"svc_inference_count_total", mv, tt.rows},
			}
			for reason, bodies := range tt.fail {
				checks = append(checks, struct {
					name   string
					labels map[string]string
					want   float64
				}{"svc_inference_request_failures_total", with("reason", reason), float64(len(bodies))})
			}
			for _, c := range checks {
				if got := delta(c.name, c.labels); got != c.want {
					t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			infers, execs := after.value(t, "svc_inference_count_total", mv), after.value(t, "svc_inference_exec_count_total", mv)
			if execs < 1 || infers < execs {
				t.Errorf("inference count %v, execution count %v: want inferences ≥ executions ≥ 1", infers, execs)
			}
			if !tt.batched && infers != execs {
				t.Errorf("a model without a batch dimension: inference count %v ≠ execution count %v", infers, execs)
			}
			if got := after.value(t, "svc_inference_compute_duration_seconds", mv); got != execs {
				t.Errorf("compute histogram has %v samples, want one per execution (%v)", got, execs)
			}
			if got := after.value(t, "svc_inference_in_flight", mv); got != 0 {
				t.Errorf("in flight = %v between requests", got)
			}
			// The batch size limit is there exactly when the model is
			// batched: the adaptive limit starts at 1 and stays within
			// max_batch_size.
			if _, has := after["svc_batch_size_limit"]; has != tt.batched {
				t.Errorf("svc_batch_size_limit present = %v for a model batched = %v", has, tt.batched)
			} else if has {
				if got := after.value(t, "svc_batch_size_limit", mv); got < 1 || got > 32 {
					t.Errorf("svc_batch_size_limit = %v, want 1 to 32", got)
				}
			}
			if got := after.value(t, "svc_model_load_seconds", mv); got <= 0 {
				t.Errorf("svc_model_load_seconds = %v", got)
			}
			for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
				if after.value(t, name, nil) <= 0 {
					t.Errorf("%s missing or zero", name)
				}
			}

			// The classic text format too.
			text, r := scrapeMetrics(t, s, "text/plain;version=0.0.4")
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
				t.Errorf("text scrape Content-Type = %q", ct)
			}
			if got := text.value(t, "svc_inference_requests_total", with("status", "success")); got != after.value(t, "svc_inference_requests_total", with("status", "success")) {
				t.Errorf("text scrape: %v successes", got)
			}

			// Everyone else gets the spec's record.
			for _, accept := range []string{"", "application/json", "*/*"} {
				var headers []string
				if accept != "" {
					headers = []string{"Accept", accept}
				}
				r := s.do(http.MethodGet, "/metrics", "", nil, headers...)
				var rec metricsRecord
				if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("/metrics with Accept %q: %d %q %s", accept, r.Status, r.Header.Get("Content-Type"), r.Body)
				}
				if err := json.Unmarshal(r.Body, &rec); err != nil || rec.Provider.Name != "CPUExecutionProvider" || len(rec.AvailableProviders) == 0 {
					t.Errorf("/metrics with Accept %q: %v %s", accept, err, r.Body)
				}
			}

			// Triton statistics agree with the scrape.
			r = s.get("/v2/models/" + tt.model + "/stats")
			var st struct {
				ModelStats []struct {
					Name           string  `json:"name"`
					Version        string  `json:"version"`
					InferenceCount float64 `json:"inference_count"`
					ExecutionCount float64 `json:"execution_count"`
					InferenceStats map[string]struct {
						Count float64 `json:"count"`
						Ns    float64 `json:"ns"`
					} `json:"inference_stats"`
				} `json:"model_stats"`
			}
			if r.Status != http.StatusOK {
				t.Fatalf("stats: %d %s", r.Status, r.Body)
			}
			if err := json.Unmarshal(r.Body, &st); err != nil || len(st.ModelStats) != 1 {
				t.Fatalf("stats: %v %s", err, r.Body)
			}
			ms := st.ModelStats[0]
			is := ms.InferenceStats
			if ms.Name != tt.model || ms.Version != tt.version || ms.InferenceCount != infers || ms.ExecutionCount != execs ||
				is["success"].Count != float64(len(tt.ok)) || is["fail"].Count != float64(failures) ||
				is["queue"].Count != float64(reached) || is["compute_infer"].Count != execs || is["success"].Ns <= 0 || is["compute_infer"].Ns <= 0 {
				t.Errorf("stats disagree with the scrape (inferences %v, executions %v):\n%s", infers, execs, r.Body)
			}
			r = s.get("/v2/models/nope/stats")
			var e map[string]string
			if r.Status != http.StatusNotFound || json.Unmarshal(r.Body, &e) != nil || e["error"] != "Request for unknown model: 'nope' is not found" {
				t.Errorf("unknown model's stats: %d %s", r.Status, r.Body)
			}
		})
	}
}
