package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseTailMetrics(t *testing.T) {
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
	h, gcs := parseTailMetrics(strings.TrimSuffix(text, "\n"))
	if h == nil || gcs != -1 {
		t.Fatalf("histogram %v, collections %d; want the histogram and -1 (none scraped)", h, gcs)
	}
	const gcText = "# TYPE go_gc_duration_seconds summary\ngo_gc_duration_seconds{quantile=\"0.5\"} 3.6e-05\ngo_gc_duration_seconds_sum 0.0027\ngo_gc_duration_seconds_count 79\n"
	if _, gcs := parseTailMetrics(text + gcText); gcs != 79 {
		t.Fatalf("collections %d, want 79", gcs)
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
		// The collections' count without its summary's # TYPE line.
		"go_gc_duration_seconds_count 5\n",
		// No successes.
		"# TYPE svc_inference_request_duration_seconds histogram\nsvc_inference_request_duration_seconds_count{status=\"failure\"} 2\n",
	} {
		if h, gcs := parseTailMetrics(bad); h != nil || gcs != -1 {
			t.Errorf("from %q: histogram %+v, collections %d", bad, h, gcs)
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
	wrk := readFixture(t, "perf", "tail-default.json")
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
			dir := fixtureDir(t, map[string]string{"tail-default.json": wrk, "tail-default.sched.json": tt.sched})
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

// TestWhyTailOwnCore explains the tail on a core of its own from the
// pinned run's scheduler counts, the server's histogram and the latencies
// timed one by one, and says so when that run is missing.
func TestWhyTailOwnCore(t *testing.T) {
	full, err := readTail(filepath.Join("testdata", "perf"))
	if err != nil {
		t.Fatal(err)
	}
	var noPinned Tail
	for i, r := range full {
		if r.Key != "pinned" {
			noPinned = append(noPinned, r)
			continue
		}
		// The fixture's pinned run was not timed one by one.
		if err := json.Unmarshal([]byte(`{"measured_us": {"p50": 126, "p99": 575}}`), &full[i].Wrk); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		tail Tail
		want []string
	}{
		{"all the pinned run's figures", full, []string{
			"With the server alone on CPU 0 and wrk on CPU 1",
			"runnable but waiting for a core",
			"The server's own histogram puts 99 % of its ",
			"Timed one by one without wrk's correction for coordinated omission: p50 126µs and p99 575µs (p99 ÷ p50 4.6).",
			"Go collected its garbage 79 times from the server's start to the end of the run",
			"The same with the collector off (`GOGC=off`): p99 ÷ p50 2.4 (p50 129µs, p99 315µs, ",
			"timed one by one p50 128µs and p99 295µs (p99 ÷ p50 2.3)",
		}},
		{"collections make no part of the tail", withNoGCP99(full, 1.05), []string{
			"p99 within 10 % of the run with the collector on, so the collections are not where the tail on a core of its own comes from.",
		}},
		{"a heap that only grows", withNoGCP99(full, 1.5), []string{
			"p99 50 % higher without the collections (a heap that only grows)",
		}},
		{"no pinned run", noPinned, []string{"The run with the server on a core of its own did not happen."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			whyTailOwnCore(&b, tt.tail)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
		})
	}
}

// withNoGCP99 is a copy of t whose pinned-nogc run has f times the p99 of
// the pinned run.
func withNoGCP99(t Tail, f float64) Tail {
	out := slices.Clone(t)
	p99 := out.run("pinned").Wrk.LatencyUS.P99
	out.run("pinned-nogc").Wrk.LatencyUS.P99 = f * p99
	return out
}

// fixtureDir writes files (name: content; empty content: no file) to a new
// temporary directory and returns it.
func fixtureDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readFixture is the content of testdata/path.
func readFixture(t *testing.T, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
