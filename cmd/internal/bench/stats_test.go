package bench_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func TestRecorderPercentiles(t *testing.T) {
	rec := bench.NewRecorder()
	// 1 µs … 1000 µs in random order, all successful.
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(1000) {
		rec.Record(time.Duration(i+1)*time.Microsecond, 200, nil)
	}
	// Failures count as requests and errors, not toward latency.
	rec.Record(time.Hour, 500, errors.New("status 500: Inference failed: boom"))
	rec.Record(time.Millisecond, 503, nil)
	rec.Record(time.Millisecond, 0, errors.New("connection refused"))

	l := rec.Level(4, 2*time.Second)
	if l.Concurrency != 4 || l.Requests != 1003 || l.Errors != 3 {
		t.Fatalf("concurrency, requests, errors = %d, %d, %d; want 4, 1003, 3", l.Concurrency, l.Requests, l.Errors)
	}
	if l.ThroughputRPS != 500 {
		t.Errorf("throughput = %v, want 500 (1000 successful in 2 s)", l.ThroughputRPS)
	}
	if l.FirstError != "status 500: Inference failed: boom" {
		t.Errorf("first error = %q", l.FirstError)
	}
	if l.StatusCodes["200"] != 1000 || l.StatusCodes["500"] != 1 || l.StatusCodes["503"] != 1 || len(l.StatusCodes) != 3 {
		t.Errorf("status codes = %v", l.StatusCodes)
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"min", l.LatencyUS.Min, 1},
		{"mean", l.LatencyUS.Mean, 500.5},
		{"p50", l.LatencyUS.P50, 500},
		{"p90", l.LatencyUS.P90, 900},
		{"p99", l.LatencyUS.P99, 990},
		{"max", l.LatencyUS.Max, 1000},
	}
	for _, tt := range tests {
		// Three significant digits: within 0.1 % (and the 0.1 µs rounding).
		if math.Abs(tt.got-tt.want) > tt.want*0.001+0.05 {
			t.Errorf("%s = %v µs, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestRecorderStatusOnlyError(t *testing.T) {
	rec := bench.NewRecorder()
	rec.Record(time.Millisecond, 404, nil)
	l := rec.Level(1, time.Second)
	if l.Errors != 1 || l.FirstError != "status 404" || l.ThroughputRPS != 0 || l.LatencyUS != (bench.Latency{}) {
		t.Fatalf("level = %+v", l)
	}
}

func TestRecorderEmpty(t *testing.T) {
	l := bench.NewRecorder().Level(2, 0)
	if l.Requests != 0 || l.ThroughputRPS != 0 || l.LatencyUS != (bench.Latency{}) || l.StatusCodes != nil {
		t.Fatalf("empty level = %+v", l)
	}
}

func TestRecorderSmallSample(t *testing.T) {
	// Nearest rank: with 3 values p50 is the 2nd, p99 the 3rd.
	rec := bench.NewRecorder()
	for _, us := range []int{300, 100, 200} {
		rec.Record(time.Duration(us)*time.Microsecond, 0, nil)
	}
	l := rec.Level(1, time.Second)
	if math.Abs(l.LatencyUS.P50-200) > 0.3 || l.LatencyUS.P99 != 300 || l.LatencyUS.Max != 300 || l.LatencyUS.Min != 100 {
		t.Fatalf("latency = %+v", l.LatencyUS)
	}
	if l.StatusCodes != nil {
		t.Fatalf("in-process levels have no status codes: %v", l.StatusCodes)
	}
}
