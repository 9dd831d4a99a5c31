package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// perfDir holds the artifacts of short runs of build/bench-served.sh (tiny,
// cls and det at concurrency 1, 4 and 16), build/bench-protocols.sh (v2
// binary tensors at 1 and 16), the profiled runs det-c16, det-c16-bin,
// tiny-c16-log and tiny-c16-nolog of build/bench.sh, and
// build/bench-tail.sh, all on a busy 2-core machine.
const perfDir = "testdata/perf"

// servedLevel is a svc bench run (rps, errors) and, when wrkRPS > 0, a
// 1-second wrk run at concurrency c.
func servedLevel(c int, rps float64, errs int64, wrkRPS float64, p50, p99 float64) ServedLevel {
	l := ServedLevel{Concurrency: c, Bench: &bench.Report{Served: []bench.Level{{Concurrency: c, Requests: 100, Errors: errs, ThroughputRPS: rps,
		LatencyUS: bench.Latency{P50: p50, P99: p99}}}}}
	if wrkRPS > 0 {
		l.Wrk = &Wrk{Requests: int64(wrkRPS), DurationUS: 1e6}
		l.Wrk.LatencyUS.P50, l.Wrk.LatencyUS.P99 = p50, p99
	}
	return l
}

// rawOf is a raw baseline whose best mode reached items/s.
func rawOf(items float64) *RawBatch {
	return &RawBatch{Runs: []RawRun{{Rep: 1, Batch: 1, RowsPerS: items / 2}, {Rep: 1, Batch: 1, Sessions: 2, Threads: 1, RowsPerS: items}}}
}

func TestBaselineTargets(t *testing.T) {
	binary := func(c1, c16 float64) *bench.Report {
		return &bench.Report{Served: []bench.Level{lvl(1, c1, 1000), lvl(16, c16, 9000)}}
	}
	tests := []struct {
		name    string
		give    Data
		results []string // cls v1, det v1, cls binary, det binary
		measure []string // substrings of Measured, in order
	}{
		{
			name: "met on wrk and svc bench",
			give: Data{
				Served: Served{
					{Key: "cls", Raw: rawOf(1000), Levels: []ServedLevel{servedLevel(1, 300, 0, 320, 3000, 4000), servedLevel(16, 580, 0, 650, 20000, 30000)}},
					{Key: "det", Raw: rawOf(100), Levels: []ServedLevel{servedLevel(16, 95, 0, 91, 150000, 200000)}},
				},
				Protocols: Protocols{"cls": {bench.ProtocolV2Binary: binary(400, 900)}, "det": {bench.ProtocolV2Binary: binary(40, 86)}},
			},
			results: []string{"**met**", "**met**", "**met**", "**met**"},
			measure: []string{
				"0.65 by wrk (svc bench 0.58 (580/s), wrk 0.65 (650/s); baseline 1000 items/s); concurrency 1: svc bench 0.30 (300/s), wrk 0.32 (320/s)",
				"0.95 by svc bench (svc bench 0.95 (95.0/s), wrk 0.91 (91.0/s); baseline 100 items/s)",
				"0.90 by svc bench (svc bench 0.90 (900/s); baseline 1000 items/s); concurrency 1: svc bench 0.40 (400/s)",
				"0.86 by svc bench",
			},
		},
		{
			name: "missed, and errors miss",
			give: Data{
				Served: Served{
					{Key: "cls", Raw: rawOf(1000), Levels: []ServedLevel{servedLevel(16, 500, 0, 550, 20000, 30000)}},
					{Key: "det", Raw: rawOf(100), Levels: []ServedLevel{servedLevel(16, 95, 3, 0, 150000, 200000)}},
				},
				Protocols: Protocols{"cls": {bench.ProtocolV2Binary: binary(400, 700)}},
			},
			results: []string{"**missed**", "**missed**", "**missed**", "not checked"},
			measure: []string{"0.55 by wrk", "0.95 by svc bench (svc bench 0.95 (95.0/s), 3 failed;", "0.70 by svc bench", "not measured"},
		},
		{
			name: "no baseline: nothing checked",
			give: Data{
				Served:    Served{{Key: "cls", Levels: []ServedLevel{servedLevel(16, 500, 0, 550, 1, 2)}}},
				Protocols: Protocols{"cls": {bench.ProtocolV2Binary: binary(400, 700)}},
			},
			results: []string{"not checked", "not checked", "not checked", "not checked"},
			measure: []string{"not measured", "not measured", "not measured", "not measured"},
		},
		{
			name:    "nothing ran",
			results: []string{"not checked", "not checked", "not checked", "not checked"},
			measure: []string{"not measured", "not measured", "not measured", "not measured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BaselineTargets(tt.give)
			if len(got) != 4 {
				t.Fatalf("%d targets", len(got))
			}
			for i, g := range got {
				if g.result() != tt.results[i] || !strings.Contains(g.Measured, tt.measure[i]) {
					t.Errorf("%s: %s %q, want %s with %q", g.Key, g.result(), g.Measured, tt.results[i], tt.measure[i])
				}
				if g.result() == "**missed**" && g.Miss == "" {
					t.Errorf("%s: missed without saying by how much", g.Key)
				}
			}
		})
	}
	if got := BaselineTargets(tests[1].give)[0].Miss; got != "0.05: 550/s by wrk against the 600/s (0.60 × 1000) needed" {
		t.Errorf("miss = %q", got)
	}
}

// fakeProfile is a profile whose server used total seconds of CPU over
// requests requests, with the given cumulative times.
func fakeProfile(total float64, requests int64, cum map[string]float64) *Profile {
	return &Profile{
		Name: "fake", Samples: total, Cum: cum, Flat: map[string]float64{},
		CPU: CPUUse{WallS: 2, ServerCPUS: total, ServerCPUTotalS: total, BenchCPUS: 1},
		Run: bench.Report{Served: []bench.Level{{Concurrency: 16, Requests: requests}}},
	}
}

func TestValidationTarget(t *testing.T) {
	tests := []struct {
		name    string
		give    *Profile
		result  string
		measure string
	}{
		{"met", fakeProfile(4, 200, map[string]float64{fnValidate: 0.06}), "**met**", "1.5 % (0.06 s of the server's 4.00 s in the profiled run); 300µs per request"},
		{"at the limit", fakeProfile(4, 200, map[string]float64{fnValidate: 0.2}), "**met**", "5.0 %"},
		{"missed", fakeProfile(4, 200, map[string]float64{fnValidate: 0.4}), "**missed**", "10.0 %"},
		{"not sampled", fakeProfile(4, 200, map[string]float64{}), "**met**", "0.0 %"},
		{"no profile", nil, "not checked", "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := ValidationTarget(tt.give)
			if g.result() != tt.result || !strings.Contains(g.Measured, tt.measure) {
				t.Errorf("%s %q, want %s with %q", g.result(), g.Measured, tt.result, tt.measure)
			}
		})
	}
}

func TestAccessLogTarget(t *testing.T) {
	tests := []struct {
		name    string
		on, off *Profile
		result  string
		measure string
		miss    string
	}{
		{"met, with the cross-check", fakeProfile(10, 100000, map[string]float64{fnAccessLine: 0.1, fnLogWriter: 0.05}), fakeProfile(9.5, 100000, nil),
			"**met**", "1.5 % (access line 1.0 %, log writer 0.5 %); server CPU per request 100.0 µs with the log, 95.0 µs with `--access-log off` (+5 %)", ""},
		{"missed", fakeProfile(10, 100000, map[string]float64{fnAccessLine: 0.2, fnLogWriter: 0.1}), nil,
			"**missed**", "3.0 % (access line 2.0 %, log writer 1.0 %)", "1.0 percentage points"},
		{"no profile with the log", nil, fakeProfile(9.5, 100000, nil), "not checked", "not measured", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := AccessLogTarget(tt.on, tt.off)
			if g.result() != tt.result || !strings.Contains(g.Measured, tt.measure) || g.Miss != tt.miss {
				t.Errorf("%s %q (miss %q), want %s with %q (miss %q)", g.result(), g.Measured, g.Miss, tt.result, tt.measure, tt.miss)
			}
		})
	}
}

func TestTailTarget(t *testing.T) {
	tests := []struct {
		name    string
		give    Served
		result  string
		measure string
	}{
		{"met on wrk", Served{{Key: "tiny", Levels: []ServedLevel{servedLevel(4, 9000, 0, 10000, 300, 1500)}}},
			"**met**", "wrk 5.0 (p50 300µs, p99 1.50ms, 10000/s); svc bench 5.0 (p50 300µs, p99 1.50ms, 9000/s)"},
		{"missed", Served{{Key: "tiny", Levels: []ServedLevel{servedLevel(4, 9000, 0, 10000, 200, 8000)}}}, "**missed**", "wrk 40.0"},
		{"svc bench alone is not judged", Served{{Key: "tiny", Levels: []ServedLevel{servedLevel(4, 9000, 0, 0, 200, 300)}}}, "not checked", "not measured"},
		{"other levels only", Served{{Key: "tiny", Levels: []ServedLevel{servedLevel(1, 9000, 0, 10000, 200, 300)}}}, "not checked", "not measured"},
		{"no tiny model", Served{{Key: "cls", Levels: []ServedLevel{servedLevel(4, 9000, 0, 10000, 200, 300)}}}, "not checked", "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := TailTarget(tt.give)
			if g.result() != tt.result || !strings.Contains(g.Measured, tt.measure) {
				t.Errorf("%s %q, want %s with %q", g.result(), g.Measured, tt.result, tt.measure)
			}
		})
	}
}

func TestTailSummary(t *testing.T) {
	run := func(key, title string, p99 float64) TailRun {
		r := TailRun{Key: key, Title: title}
		r.Wrk.LatencyUS.P50, r.Wrk.LatencyUS.P99 = 100, p99
		return r
	}
	tests := []struct {
		name string
		give Tail
		want string
	}{
		{"cuts sorted, rises", Tail{run("default", "defaults", 1000), run("log-off", "access log off", 950), run("nobatch", "batching off", 800), run("pinned", "pinned", 300), run("gogc400", "GOGC=400", 1500)},
			"Against the defaults' p99 of 1.00ms, the variants that cut p99 the most: pinned (-70 %), batching off (-20 %); raised it: GOGC=400 (+50 %). Changes under 10 % are within what separate short runs on a shared machine vary by."},
		{"no change", Tail{run("default", "defaults", 1000), run("log-off", "access log off", 950)},
			"Against the defaults' p99 of 1.00ms, no variant cut p99 by 10 % or more. Changes under 10 % are within what separate short runs on a shared machine vary by."},
		{"no defaults", Tail{run("log-off", "access log off", 950)}, "The defaults' run is missing: no comparison."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TailSummary(tt.give); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReadTail(t *testing.T) {
	tail, err := readTail(perfDir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	gcs := map[string]int64{}
	for _, r := range tail {
		keys = append(keys, r.Key)
		gcs[r.Key] = r.GCs
		if r.CPU == nil || r.Wrk.Requests == 0 || r.Wrk.LatencyUS.P99 == 0 {
			t.Errorf("%s: %+v", r.Key, r)
		}
	}
	// The collections from the scraped metrics; -1 where the fixture has
	// none.
	if gcs["pinned"] != 79 || gcs["pinned-nogc"] != 0 || gcs["default"] != -1 || gcs["log-off"] != -1 {
		t.Errorf("garbage collections: %v", gcs)
	}
	if got := strings.Join(keys, " "); got != "default log-off nobatch gomaxprocs1 gogc400 pinned pinned-nogc" {
		t.Errorf("variants = %s", got)
	}
	empty, err := readTail(t.TempDir())
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty dir: %+v, %v", empty, err)
	}
}

// TestWritePerfGolden renders the performance targets, their explanations
// and sections from the fixture artifacts and compares them with
// testdata/perf.golden.md (-update rewrites it).
func TestWritePerfGolden(t *testing.T) {
	d, err := readData(perfDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{profDet16, profDetBin16, profLogOn, profLogOff} {
		if d.Profiles[name] == nil {
			t.Fatalf("profile %s missing", name)
		}
	}
	var b bytes.Buffer
	b.WriteString("| target | measured | result |\n|---|---|---|\n")
	targets := PerfTargets(d)
	for _, tg := range targets {
		b.WriteString("| " + tg.Goal + " | " + tg.Measured + " | " + tg.result() + " |\n")
	}
	b.WriteString("\n")
	writeWhy(&b, targets, d)
	writeBaselineRatios(&b, d)
	writePinned(&b, d.Pinned)
	writeTail(&b, d.Tail)
	checkGolden(t, "perf.golden.md", b.Bytes())
}

func TestWriteBinaryProfile(t *testing.T) {
	d, err := readData(perfDir)
	if err != nil {
		t.Fatal(err)
	}
	// The same runs, with det's v2 binary run at concurrency 16 fast enough
	// to meet its served ÷ baseline target.
	fast, err := readData(perfDir)
	if err != nil {
		t.Fatal(err)
	}
	r := *fast.Protocols["det"][bench.ProtocolV2Binary]
	r.Served = []bench.Level{lvl(16, 150, 100000)}
	fast.Protocols = Protocols{"det": {bench.ProtocolV2Binary: &r}}
	tests := []struct {
		name  string
		give  Data
		model string
		want  string // "" when nothing is written
	}{
		{"baseline target missed: a pointer", d, "det", "The profile of this path (v2 binary tensors, concurrency 16) is under \"PaddleOCR det, v2 binary tensors, concurrency 16: served ≥ 0.85 × the raw baseline (svc bench)\" below.\n\n"},
		{"baseline target met: the profile", fast, "det", "**Profile: PaddleOCR det, v2 binary tensors, concurrency 16.**"},
		{"no profile", d, "cls", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeBinaryProfile(&b, tt.give, tt.model)
			if tt.want == "" && b.Len() != 0 || !strings.HasPrefix(b.String(), tt.want) {
				t.Errorf("got %q, want it to start with %q", b.String(), tt.want)
			}
		})
	}
}
