package main

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseServerHist(t *testing.T) {
	text := `# HELP svc_inference_request_duration_seconds Time from receiving an inference request to answering it, by status.
# TYPE svc_inference_request_duration_seconds histogram
svc_inference_request_duration_seconds_bucket{model="m",status="failure",version="1",le="0.0001"} 7
svc_inference_request_duration_seconds_bucket{model="m",status="failure",version="1",le="0.001"} 7
svc_inference_request_duration_seconds_bucket{model="m",status="failure",version="1",le="0.01"} 7
svc_inference_request_duration_seconds_bucket{model="m",status="failure",version="1",le="+Inf"} 7
svc_inference_request_duration_seconds_sum{model="m",status="failure",version="1"} 0.0003
svc_inference_request_duration_seconds_count{model="m",status="failure",version="1"} 7
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.0001"} 50
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.001"} 90
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="0.01"} 99
svc_inference_request_duration_seconds_bucket{model="m",status="success",version="1",le="+Inf"} 100
svc_inference_request_duration_seconds_sum{model="m",status="success",version="1"} 0.25
svc_inference_request_duration_seconds_count{model="m",status="success",version="1"} 100
`
	// As readText gives it: without the last newline.
	h := parseServerHist(strings.TrimSuffix(text, "\n"))
	if h == nil {
		t.Fatal("no histogram")
	}
	if want := []float64{0.0001, 0.001, 0.01, math.Inf(1)}; !slices.Equal(h.LE, want) {
		t.Fatalf("bounds %v, want %v", h.LE, want)
	}
	if h.Total() != 100 {
		t.Fatalf("total %v, want 100 (the successes only)", h.Total())
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
	for _, bad := range []string{
		// Buckets without their # TYPE line are not a histogram.
		"svc_inference_request_duration_seconds_bucket{status=\"success\",le=\"1\"} 3\n",
		// Another histogram only.
		"# TYPE svc_inference_queue_duration_seconds histogram\nsvc_inference_queue_duration_seconds_bucket{le=\"+Inf\"} 3\nsvc_inference_queue_duration_seconds_count 3\n",
		// Not an exposition.
		"HTTP/1.0 200 OK\n{\"detail\": 1}\n",
		// No successes.
		"# TYPE svc_inference_request_duration_seconds histogram\nsvc_inference_request_duration_seconds_count{status=\"failure\"} 2\n",
	} {
		if h := parseServerHist(bad); h != nil {
			t.Errorf("a histogram from %q: %+v", bad, h)
		}
	}
	if fmtBound(math.Inf(1)) != "∞" || fmtBound(0.00025) != "250µs" {
		t.Errorf("fmtBound: %q, %q", fmtBound(math.Inf(1)), fmtBound(0.00025))
	}
}

func TestTailOwnCoreTarget(t *testing.T) {
	run := func(key string, p50, p99 float64, non200 int64) TailRun {
		r := TailRun{Key: key}
		r.Wrk.Requests, r.Wrk.DurationUS, r.Wrk.Non200 = 20000, 1_000_000, non200
		r.Wrk.LatencyUS.P50, r.Wrk.LatencyUS.P99 = p50, p99
		return r
	}
	tests := []struct {
		name     string
		tail     Tail
		met      string // "met", "missed" or "" (not checked)
		measured string
		miss     bool // a "missed by" line: the ratio is over the bound
	}{
		{"met", Tail{run("default", 100, 3000, 0), run("pinned", 120, 590, 0)}, "met", "wrk 4.9 (p50 120µs, p99 590µs, 20000/s); the defaults sharing both cores with wrk: 20000/s", false},
		{"missed", Tail{run("pinned", 100, 700, 0)}, "missed", "wrk 7.0 (p50 100µs, p99 700µs, 20000/s)", true},
		{"failed requests", Tail{run("pinned", 100, 400, 3)}, "missed", "wrk 4.0 (p50 100µs, p99 400µs, 19997/s)", false},
		{"no pinned run", Tail{run("default", 100, 300, 0)}, "", "not measured", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TailOwnCoreTarget(tt.tail)
			res := ""
			if got.Met != nil {
				res = map[bool]string{true: "met", false: "missed"}[*got.Met]
			}
			if res != tt.met || got.Measured != tt.measured {
				t.Fatalf("TailOwnCoreTarget = %s, %q; want %s, %q", res, got.Measured, tt.met, tt.measured)
			}
			if tt.miss != (got.Miss != "") {
				t.Fatalf("Miss = %q", got.Miss)
			}
		})
	}
}

// TestReadTailSched: a run's scheduler counts are read when their file is
// there, left out when it is not, and a file that does not parse is an
// error that names it.
func TestReadTailSched(t *testing.T) {
	wrk, err := os.ReadFile(filepath.Join("testdata", "perf", "tail-default.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, sched string // sched "": no file
		want        *TailSched
		err         string
	}{
		{"read", `{"run_s": 1.5, "wait_s": 0.25, "slices": 300, "threads": 7}`, &TailSched{RunS: 1.5, WaitS: 0.25, Slices: 300, Threads: 7}, ""},
		{"missing", "", nil, ""},
		{"malformed", `{"run_s": 1.5,`, nil, "tail-default.sched.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tail-default.json"), wrk, 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.sched != "" {
				if err := os.WriteFile(filepath.Join(dir, "tail-default.sched.json"), []byte(tt.sched), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readTail(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("readTail = %v, %v; want an error naming %s", got, err, tt.err)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("readTail = %v, %v; want the one run", got, err)
			}
			if !reflect.DeepEqual(got[0].Sched, tt.want) {
				t.Fatalf("Sched = %+v, want %+v", got[0].Sched, tt.want)
			}
		})
	}
}
