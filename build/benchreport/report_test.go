package main

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The fixtures are the artifacts of short runs of make bench's scripts:
// testdata/short of build/bench.sh with every knob turned down (the
// command is in its commands.txt), testdata/perf of bench-served.sh,
// bench-protocols.sh (v2 binary), bench-pinned.sh, bench-tail.sh and four
// profiled runs, testdata/load of bench-served.sh on the tiny model and
// bench-memory.sh.
var fixtures = []string{"short", "perf", "load"}

// TestGolden renders each fixture and compares the tables with
// testdata/NAME.golden.md (go test -update rewrites them, to be checked by
// reading; TestTables checks cells against figures worked out by hand).
func TestGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			got, err := generate(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden.md")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the tables differ from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// cells returns the cells of the table row that starts with the cells
// prefix, in the section whose heading starts with heading.
func cells(t *testing.T, md, heading string, prefix ...string) []string {
	t.Helper()
	_, sec, ok := strings.Cut(md, "## "+heading)
	if !ok {
		t.Fatalf("no section %q in\n%s", heading, md)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		var cs []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cs = append(cs, strings.TrimSpace(c))
		}
		if len(cs) >= len(prefix) && slices.Equal(cs[:len(prefix)], prefix) {
			return cs
		}
	}
	t.Fatalf("no row %q in section %q:\n%s", prefix, heading, sec)
	return nil
}

// TestTables checks cells of the fixtures' tables against figures worked
// out by hand from their files.
func TestTables(t *testing.T) {
	md := map[string]string{}
	for _, name := range []string{"perf", "short"} {
		b, err := generate(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		md[name] = string(b)
	}
	tests := []struct {
		fixture, heading string
		row              []string
		want             []string
	}{
		// served-cls-raw.txt: batch 1 1279, batch 8 1370, 2 sessions 1292
		// rows/s; the baseline is the highest, 1370.
		{"perf", "Raw baseline", []string{"PaddleOCR cls", "batch 8, one session"}, []string{"1370", "1370"}},
		{"perf", "Raw baseline", []string{"PaddleOCR cls", "2 sessions × 1 thread, batch 1"}, []string{"1292", ""}},
		// served-cls-svcbench-c1.json 341.9/s, -c16.json 509.5/s;
		// served-cls-wrk-c16.json 592 requests in 1.059672 s: 558.7/s.
		// ÷ 1370: 0.250, 0.372, 0.408.
		{"perf", "Served ÷ raw baseline", []string{"PaddleOCR cls", "v1 JSON", "svc bench"}, []string{"342", "0.25", "510", "0.37", "1370", "≥ 0.60"}},
		{"perf", "Served ÷ raw baseline", []string{"PaddleOCR cls", "v1 JSON", "wrk"}, []string{"406", "0.30", "559", "0.41", "1370", "≥ 0.60"}},
		// proto-det-v2-binary.json c=16 51.7/s ÷ served-det-raw.txt's best
		// repetition (2 sessions, 153.5 rows/s).
		{"perf", "Served ÷ raw baseline", []string{"PaddleOCR det", "v2 binary", "svc bench"}, []string{"53.8", "0.35", "51.7", "0.34", "154", "≥ 0.85"}},
		// served-cls-wrk-c16.cpu.json: 1.09 s and 0.249 s of CPU in 1.23 s.
		{"perf", "Served:", []string{"PaddleOCR cls", "wrk", "16"}, []string{"559", "0.41", "27.72ms", "72.60ms", "89 %", "20 %", "0"}},
		// prof-det-c16: 8 probes + 155 requests; 4.16 s of server CPU,
		// 0.786 s of svc bench's: 25.52 ms per request, 15.9 %.
		{"perf", "CPU profiles of the server: the runs", []string{"det-c16"}, []string{"paddleocr-det", "v1", "16", "163", "73.2", "173.15ms", "2.80 s", "4.16 s", "0.79 s", "25.52ms", "15.9 %"}},
		// tail-default.json: 15286 requests in 1.099596 s; p99 8153 ÷ p50
		// 188; the histogram puts 99 % of 42370 at or under 250 µs; its
		// .sched.json waited 0.7214 s in 20231 slices.
		{"perf", "Tail latency", []string{"default"}, []string{"13901", "188µs", "2.49ms", "8.15ms", "43.4", "15.90ms", "98.2µs", "2.21ms", "22.5"}},
		{"perf", "Tail latency", []string{"pinned-nogc"}, []string{"29060", "129µs", "215µs", "315µs", "2.4"}},
		// pinned-det-raw.txt: one session of one thread at 104.7 items/s.
		{"perf", "Server on a core of its own", []string{"PaddleOCR det", "105 items/s (1 session × 1 thread, batch 1)", "v2 binary", "16"}, []string{"89.5", "170.13ms", "0.85"}},
		// prof-tiny-c16-log.focus-access-log.txt kept 0.15 s of the
		// server's 8.90 s (.cpu.json), over 8 probes + 255430 requests.
		{"short", "CPU profiles of the server: parts", []string{"tiny-c16-log", "access-log"}, []string{"`accessLogger\\|LogWriter`", "0.15 s", "1.7 %", "0.6µs"}},
		// tune-nobatch-rK ÷ tune-default-rK at c=32: 623.9/629,
		// 524/377.7, median 1.1896; c=1 p50: 1737.7/1762.3,
		// 1840.1/1778.7, median 1.0103, worse.
		{"short", "Batching, session settings and the self-tuning controllers", []string{"nobatch", "2"}, []string{"1.79ms (1.74ms–1.84ms)", "518 (471–565)", "536 (421–651)", "12.58ms (11.81ms–13.34ms)", "574 (524–624)", "50.30ms (41.12ms–59.47ms)", "-1 % (1 of 2)", "+11 % (1 of 2)", "+19 % (1 of 2)"}},
		// side-on-rK ÷ side-off-rK p50: 1775.6/1752.1, 1885.2/1753.1.
		// on p50 1775.6/1885.2 µs, off 1752.1/1753.1: on slower in both pairs.
		{"short", "Side by side", []string{"batching on ÷ off (cls)", "1", "2"}, []string{"1.83ms (1.78ms–1.89ms)", "1.75ms (1.75ms–1.75ms)", "472 (392–551)", "549 (537–561)", "1.044 (1.013–1.075)", "0.863 (0.700–1.025)", "0 of 2", "1 of 2"}},
		// raw-batch.txt rows/s at batch 8 ÷ batch 1, by repetition (the
		// mode's first and second line): 431.8/792.8, 502.6/743.5.
		{"short", "ONNX Runtime in process by batch size", []string{"8"}, []string{"58.4", "467 (432–503)", "0.61 (0.54–0.68)"}},
		// memory.json: 69972 and 72208 KiB; 8 probes + 2000, then 8 + 18000.
		{"short", "Memory of the server", []string{"after run 2"}, []string{"20016", "70.5 MiB", "+3.2 %"}},
		// mem-type-str: (147576 − 67400) KiB over 4 bodies of 1062419 bytes.
		{"short", "Memory of the server", []string{"string"}, []string{"125000", "1.01 MiB", "4", "19", "0", "65.8 MiB", "144.1 MiB", "78.3 MiB", "19.3×"}},
	}
	for _, tt := range tests {
		got := cells(t, md[tt.fixture], tt.heading, tt.row...)[len(tt.row):]
		if len(got) > len(tt.want) {
			got = got[:len(tt.want)]
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s, row %q: %q, want %q", tt.heading, tt.row, got, tt.want)
		}
	}
}

func TestBaselineModes(t *testing.T) {
	r := &RawBench{Runs: []RawRun{
		{Rep: 1, Batch: 8, RowsPerS: 900}, {Rep: 1, Batch: 1, RowsPerS: 600}, {Rep: 1, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: 1100},
		{Rep: 2, Batch: 8, RowsPerS: 1200}, {Rep: 2, Batch: 1, RowsPerS: 700}, {Rep: 2, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: 1150},
		{Rep: 3, Batch: 8, RowsPerS: 880}, {Rep: 3, Batch: 1, RowsPerS: 650}, {Rep: 3, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: 1120},
	}}
	modes, best := baselineModes(r)
	var labels []string
	for _, m := range modes {
		labels = append(labels, m.label)
	}
	if want := []string{"batch 1, one session", "batch 8, one session", "2 sessions × 1 thread, batch 1"}; !slices.Equal(labels, want) {
		t.Fatalf("modes %q, want %q", labels, want)
	}
	// batch 8 wins on its best repetition (1200), though its median (900)
	// is below the sessions' (1120).
	if best != 1 || modes[1].items.median != 900 || baseline(r) != 1200 {
		t.Errorf("best %d, batch 8 %+v, baseline %v", best, modes[1].items, baseline(r))
	}
	if _, best := baselineModes(nil); best != -1 || baseline(nil) != 0 {
		t.Errorf("no BenchmarkRaw: best %d, baseline %v", best, baseline(nil))
	}
}

func TestParseRawBench(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "short", "raw-batch.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Two runs of the test binary appended, the modes rotated; -count 2
	// (each mode twice in a row, GOMAXPROCS 1); other benchmarks among them.
	countTwo := `pkg: github.com/svc-dev/svc/cmd/internal/bench
BenchmarkRaw/batch=1 	 100	 10000000 ns/op	 100.0 rows/s	 100.0 runs/s
BenchmarkRaw/batch=1 	 110	 9090909 ns/op	 110.0 rows/s	 110.0 runs/s
BenchmarkRawOther/batch=1 	 1	 1 ns/op	 1 rows/s
BenchmarkPredictTiny-2 	 1	 1 ns/op
BenchmarkRaw/sessions=2x1 	 400	 2500000 ns/op	 400.0 rows/s	 400.0 runs/s
BenchmarkRaw/sessions=2x1 	 380	 2631579 ns/op	 380.0 rows/s	 380.0 runs/s
BenchmarkRaw/sessions=4x1 	 800	 1250000 ns/op	 800.0 rows/s	 800.0 runs/s
PASS
`
	tests := []struct {
		name, text string
		want       []RawRun
		err        string
	}{
		{name: "short/raw-batch.txt", text: string(b), want: []RawRun{
			{Rep: 1, Batch: 1, RowsPerS: 792.8}, {Rep: 1, Batch: 8, RowsPerS: 431.8}, {Rep: 1, Batch: 32, RowsPerS: 783.7},
			{Rep: 2, Batch: 8, RowsPerS: 502.6}, {Rep: 2, Batch: 32, RowsPerS: 366.2}, {Rep: 2, Batch: 1, RowsPerS: 743.5},
		}},
		{name: "-count 2", text: countTwo, want: []RawRun{
			{Rep: 1, Batch: 1, RowsPerS: 100}, {Rep: 2, Batch: 1, RowsPerS: 110},
			{Rep: 1, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: 400}, {Rep: 2, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: 380},
			{Rep: 1, Batch: 1, Sessions: 4, Threads: 1, RowsPerS: 800},
		}},
		{name: "no result", text: "goos: linux\n--- FAIL: BenchmarkRaw/batch=8\nFAIL\n", err: "no BenchmarkRaw result line"},
		{name: "no rows/s", text: "BenchmarkRaw/batch=8-2 \t 10\t 100 ns/op\n", err: `BenchmarkRaw/batch=8-2: no rows/s ("")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseRawBench(tt.text)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(r.Runs, tt.want) {
				t.Fatalf("runs %+v, %v; want %+v", r, err, tt.want)
			}
		})
	}
}

func TestVersus(t *testing.T) {
	lv := func(p50, rps float64) *Report {
		return &Report{Served: []Level{{Concurrency: 1, Requests: 10, ThroughputRPS: rps, LatencyUS: Latency{P50: p50}}}}
	}
	def := []*Report{lv(100, 500), lv(100, 500), nil, lv(100, 500)}
	alt := []*Report{lv(90, 520), lv(110, 480), lv(50, 900), lv(95, 510)}
	// p50 ratios 0.90, 1.10, 0.95 (round 3 has no defaults): median 0.95,
	// lower is better, so +5 %, better in 2 of 3.
	if got := versus(alt, def, p50At1); got != "+5 % (2 of 3)" {
		t.Errorf("p50: %q", got)
	}
	// req/s ratios 1.04, 0.96, 1.02: median 1.02, higher is better.
	if got := versus(alt, def, rpsAt1); got != "+2 % (2 of 3)" {
		t.Errorf("req/s: %q", got)
	}
	if got := versus(alt, def, rpsAt8); got != "" {
		t.Errorf("no level 8: %q", got)
	}
}

func TestComparedWith(t *testing.T) {
	for _, tt := range []struct{ give, want string }{
		{"default", ""}, {"tiny_default", ""}, {"nobatch", "default"}, {"procsplus1", "default"},
		{"tiny_procsplus1", "tiny_default"}, {"det_nobatch", "det_default"},
	} {
		if got := comparedWith(tt.give); got != tt.want {
			t.Errorf("comparedWith(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestInflightVariants: the in-flight table has a column per run, and a row
// only one run has is kept, empty in the other's column.
func TestInflightVariants(t *testing.T) {
	run := &Report{Served: []Level{{Concurrency: 16, Requests: 32}}}
	run.Settings.BodyBytes = 1 << 20
	m := memory{bursts: []burst{
		{variant: "", run: run, inflight: &InflightRSS{Batch: 384, Concurrency: 16, IdleKiB: 100 << 10, PeakKiB: 300 << 10, EndKiB: 290 << 10, AfterKiB: []int64{280 << 10, 120 << 10}}},
		{variant: "noreclaim", run: run, inflight: &InflightRSS{Batch: 384, Concurrency: 16, IdleKiB: 100 << 10, PeakKiB: 300 << 10, EndKiB: 290 << 10, AfterKiB: []int64{285 << 10, 284 << 10}, Env: "GOGC=50"}},
	}}
	tb := inflightTable(m)
	if !slices.Equal(tb.head, []string{"in flight", "defaults", "release_memory_after: 0s"}) {
		t.Fatalf("head %q", tb.head)
	}
	rows := map[string][]string{}
	for _, r := range tb.rows {
		rows[r[0]] = r[1:]
	}
	for name, want := range map[string][]string{
		"2 s after":          {"120.0 MiB", "284.0 MiB"},
		"server environment": {"", "GOGC=50"},
		"given back 2 s after (of what the burst added)": {"90.0 %", "8.0 %"},
	} {
		if !slices.Equal(rows[name], want) {
			t.Errorf("row %q = %q, want %q", name, rows[name], want)
		}
	}
}

func TestParseFocus(t *testing.T) {
	out := `File: svc
Type: cpu
Duration: 6.04s, Total samples = 2.18s (36.12%)
Active filters:
   focus=accessLogger|LogWriter
Showing nodes accounting for 20ms, 0.92% of 2.18s total
      flat  flat%   sum%        cum   cum%
     0.01s  0.46%  0.46%      0.01s  0.46%  github.com/svc-dev/svc/transport.appendJSONString
`
	f, err := parseFocus(out)
	if err != nil || f.regex != "accessLogger|LogWriter" || math.Abs(f.seconds-0.02) > 1e-12 {
		t.Errorf("parseFocus = %+v, %v", f, err)
	}
	for _, bad := range []string{"Showing nodes accounting for 1s, 1% of 2s total\n", "Active filters:\n   focus=x\n"} {
		if _, err := parseFocus(bad); err == nil {
			t.Errorf("parseFocus(%q): no error", bad)
		}
	}
	for in, want := range map[string]float64{"0": 0, "1.25s": 1.25, "70ms": 0.07, "1.5mins": 90, "250us": 250e-6, "3µs": 3e-6, "800ns": 800e-9} {
		if got, err := pprofSeconds(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("pprofSeconds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := pprofSeconds("5 parsecs"); err == nil {
		t.Error("pprofSeconds of an unknown unit: no error")
	}
}

func TestHistogram(t *testing.T) {
	text := `# TYPE svc_inference_request_duration_seconds histogram
svc_inference_request_duration_seconds_bucket{status="failure",le="0.001"} 7
svc_inference_request_duration_seconds_bucket{status="failure",le="+Inf"} 7
svc_inference_request_duration_seconds_bucket{status="success",le="0.001"} 990
svc_inference_request_duration_seconds_bucket{status="success",le="0.0001"} 900
svc_inference_request_duration_seconds_bucket{status="success",le="+Inf"} 1000
svc_inference_request_duration_seconds_count{status="success"} 1000
go_gc_duration_seconds_count 42
`
	h := parseHistogram(text, metricDuration, `status="success"`)
	if h == nil || h.total() != 1000 {
		t.Fatalf("histogram %+v", h)
	}
	if b := h.bound(0.99); b != 0.001 {
		t.Errorf("p99 bound %v, want 0.001", b)
	}
	if b := h.bound(0.5); b != 0.0001 {
		t.Errorf("p50 bound %v, want 0.0001 (the buckets sorted)", b)
	}
	if o := h.over(0.001); math.Abs(o-0.01) > 1e-12 {
		t.Errorf("over 1 ms %v, want 0.01", o)
	}
	if o := h.over(0.5); !math.IsNaN(o) {
		t.Errorf("over a bound that is no bucket: %v", o)
	}
	if n := parseCount(text, metricGCs); n != 42 {
		t.Errorf("GCs %d", n)
	}
	if n := parseCount(text, "go_gc_duration_seconds"); n != -1 {
		t.Errorf("a name that is only a prefix: %d", n)
	}
	if h := parseHistogram(text, metricDuration, `status="other"`); h != nil {
		t.Errorf("no such series: %+v", h)
	}
}

func TestFailedSteps(t *testing.T) {
	env := "date: 2026-11-24T20:52:19Z\ngo_bench_status: 0\nprotocols_status: 1\nload_before: 1 2 3\ntail_status: 130\n"
	if got := failedSteps(env); got != "protocols (status 1), tail (status 130)" {
		t.Errorf("failedSteps = %q", got)
	}
	if got := failedSteps("tiny_status: 0\n"); got != "none" {
		t.Errorf("failedSteps = %q", got)
	}
}

func TestParsePreprocess(t *testing.T) {
	cases := []struct {
		name, text string
		want       []preprocessRow
	}{
		{"table", "| case | svc ms/image | OpenCV ms/image | svc ÷ OpenCV |\n|---|---:|---:|---:|\n| a-jpeg | 16.65 | 24.31 | 0.68× |\n| b | 1.5 | 0.5 | 3.00× |",
			[]preprocessRow{{"a-jpeg", 16.65, 24.31}, {"b", 1.5, 0.5}}},
		{"empty", "", nil},
		{"no numbers", "| case | svc | cv |\n| x | - | 1 |", nil},
	}
	for _, c := range cases {
		if got := parsePreprocess(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/svc-dev/svc/transport/rest
BenchmarkDecode/classifier-2   2879102   390.6 ns/op   84.48 MB/s   109.1 cpu-MB/s   128 B/op   5 allocs/op
BenchmarkRouter//predict-2  1  273.8 ns/op  112 B/op  3 allocs/op
PASS
ok  	github.com/svc-dev/svc/transport/rest	14.838s
`
	got := parseGoBench(out)
	if len(got) != 2 {
		t.Fatalf("%d rows: %+v", len(got), got)
	}
	b := got[0]
	if b.pkg != "github.com/svc-dev/svc/transport/rest" || b.name != "BenchmarkDecode/classifier-2" || b.metrics["ns/op"] != "390.6" ||
		b.metrics["MB/s"] != "84.48" || b.metrics["allocs/op"] != "5" || !slices.Equal(b.other, []string{"109.1 cpu-MB/s"}) {
		t.Errorf("row %+v", b)
	}
}

// TestRunReplacesOnlyItsSection writes the tables into a file with
// hand-written text and another tool's section around the bench section,
// twice: only the section changes, and the second run changes nothing.
func TestRunReplacesOnlyItsSection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	before := "# Benchmarks\n\nAnalysis, by hand.\n\n<!-- bench:begin -->\nold tables\n<!-- bench:end -->\n\n<!-- soak:begin -->\nsoak tables\n<!-- soak:end -->\n"
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	tables, err := generate(filepath.Join("testdata", "load"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\nAnalysis, by hand.\n\n<!-- bench:begin -->\n" + strings.TrimRight(string(tables), "\n") + "\n<!-- bench:end -->\n\n<!-- soak:begin -->\nsoak tables\n<!-- soak:end -->\n"
	for range 2 {
		if err := run([]string{"-dir", filepath.Join("testdata", "load"), "-out", out}, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); string(got) != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
}

func TestMissingArtifacts(t *testing.T) {
	got, err := generate(t.TempDir())
	if err != nil || len(got) != 0 {
		t.Errorf("an empty directory: %q, %v; want no tables", got, err)
	}
	if _, err := generate(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("a directory that is not there: no error")
	}
	for name, text := range map[string]string{
		"served-cls-svcbench-c1.json": "{",
		"served-cls-raw.txt":          "--- FAIL: BenchmarkRaw/batch=1\n",
		"pinned-det-raw.txt":          "BenchmarkRaw/batch=1 \t 10\t 100 ns/op\t x rows/s\n",
		"raw-batch.txt":               "PASS\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("a broken %s: %v, want an error naming it", name, err)
		}
	}
	if err := run([]string{"-dir", t.TempDir(), "extra"}, nil); err == nil {
		t.Error("an extra argument: no error")
	}
}

// TestRunWritesATable: -section and -table write a table another script
// made as a section of its own, leaving the others as they are; a
// section without its table, or the generated tables' own, is refused.
func TestRunWritesATable(t *testing.T) {
	dir := t.TempDir()
	out, table := filepath.Join(dir, "BENCHMARKS.md"), filepath.Join(dir, "table.md")
	before := "# Benchmarks\n\n<!-- bench:begin -->\ntables\n<!-- bench:end -->\n"
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, []byte("| a | b |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := before + "\n<!-- bench-cache:begin -->\n| a | b |\n<!-- bench-cache:end -->\n"
	for range 2 {
		if err := run([]string{"-out", out, "-section", "bench-cache", "-table", table}, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); string(got) != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
	for _, args := range [][]string{
		{"-out", out, "-section", "bench-cache"},
		{"-out", out, "-table", table},
		{"-out", out, "-section", "bench", "-table", table},
		{"-section", "bench-cache", "-table", table},
	} {
		if err := run(args, nil); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
