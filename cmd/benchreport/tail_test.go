package main

import (
	"math"
	"testing"
)

func TestParseServerHist(t *testing.T) {
	text := `svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.001"} 90
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.0001"} 50
svc_inference_request_duration_seconds_bucket{model="m",status="failure",version="1",le="0.0001"} 7
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="+Inf"} 100
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.01"} 99
svc_inference_queue_duration_seconds_bucket{model="m",version="1",le="0.0001"} 100
not a metric line`
	h := parseServerHist(text)
	if h == nil {
		t.Fatal("no histogram")
	}
	if want := []float64{0.0001, 0.001, 0.01, math.Inf(1)}; len(h.LE) != len(want) || h.LE[0] != want[0] || h.LE[3] != want[3] {
		t.Fatalf("bounds %v, want %v (sorted, successes only)", h.LE, want)
	}
	if h.Total() != 100 {
		t.Fatalf("total %v, want 100", h.Total())
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 0.0001}, {0.51, 0.001}, {0.9, 0.001}, {0.99, 0.01}, {1, math.Inf(1)}} {
		if got := h.Bound(c.q); got != c.want {
			t.Errorf("Bound(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := h.Over(0.001); math.Abs(got-0.10) > 1e-12 {
		t.Errorf("Over(1ms) = %v, want 0.10", got)
	}
	if got := h.Over(0.002); !math.IsNaN(got) {
		t.Errorf("Over(a bound not in the histogram) = %v, want NaN", got)
	}
	if parseServerHist("svc_inference_queue_duration_seconds_bucket{le=\"1\"} 3") != nil {
		t.Error("a histogram from no request-duration lines")
	}
	if fmtBound(math.Inf(1)) != "∞" || fmtBound(0.00025) != "250µs" {
		t.Errorf("fmtBound: %q, %q", fmtBound(math.Inf(1)), fmtBound(0.00025))
	}
}
