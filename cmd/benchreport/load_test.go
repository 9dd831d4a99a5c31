package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata")

// checkGolden compares got with testdata/NAME, or rewrites that file with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rendered sections differ from %s (run with -update after checking):\n%s", golden, got)
	}
}

// testdata/load holds the artifacts of short runs of build/bench-served.sh
// (the tiny model at concurrency 1 and 4) and build/bench-memory.sh
// (float32, int8 and string, and the in-flight run with 3 s of readings).
const loadDir = "testdata/load"

func TestReadServed(t *testing.T) {
	s, err := readServed(loadDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Key != "tiny" || s[0].Raw == nil || len(s[0].Levels) != 2 {
		t.Fatalf("served = %+v", s)
	}
	for i, c := range []int{1, 4} {
		l := s[0].Levels[i]
		if l.Concurrency != c || l.benchLevel() == nil || l.BenchCPU == nil || l.Wrk == nil || l.WrkCPU == nil {
			t.Fatalf("level %d: %+v", i, l)
		}
	}
	w := s[0].Levels[1].Wrk
	if w.Requests != 7553 || w.DurationUS != 1094030 || w.Threads != 2 || w.Bodies != 8 || w.LatencyUS.P50 != 348 || w.Failed() != 0 {
		t.Errorf("wrk c=4 = %+v", w)
	}
	if c := s[0].Levels[1].WrkCPU; c.WallS != 1.215 || c.ServerCPUS != 0.81 || c.ClientCPUS != 0.396 {
		t.Errorf("wrk c=4 CPU = %+v", c)
	}
	empty, err := readServed(t.TempDir())
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty dir: %+v, %v", empty, err)
	}
}

func TestBaseline(t *testing.T) {
	run := func(rep int, batch int64, sessions int, rows float64) RawRun {
		r := RawRun{Rep: rep, Batch: batch, Sessions: sessions, RowsPerS: rows}
		if sessions > 0 {
			r.Threads = 1
		}
		return r
	}
	tests := []struct {
		name  string
		give  *RawBatch
		modes []string
		best  string
		items float64
	}{
		{"sessions best", &RawBatch{Runs: []RawRun{run(1, 1, 0, 1400), run(1, 8, 0, 1420), run(1, 1, 2, 2500), run(2, 1, 2, 2300), run(2, 1, 0, 1380), run(2, 8, 0, 1440)}},
			[]string{"batch 1, one session", "batch 8, one session", "2 sessions × 1 thread, batch 1"}, "2 sessions × 1 thread, batch 1", 2500},
		{"best repetition wins", &RawBatch{Runs: []RawRun{run(1, 1, 0, 100), run(2, 1, 0, 100), run(1, 1, 2, 2), run(2, 1, 2, 150)}},
			[]string{"batch 1, one session", "2 sessions × 1 thread, batch 1"}, "2 sessions × 1 thread, batch 1", 150},
		{"batch 8 best", &RawBatch{Runs: []RawRun{run(1, 1, 0, 50000), run(1, 8, 0, 230000), run(1, 1, 2, 60000)}},
			[]string{"batch 1, one session", "batch 8, one session", "2 sessions × 1 thread, batch 1"}, "batch 8, one session", 230000},
		{"no sessions", &RawBatch{Runs: []RawRun{run(1, 1, 0, 100)}}, []string{"batch 1, one session"}, "batch 1, one session", 100},
		{"nil", nil, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			modes, best := Baseline(tt.give)
			var labels []string
			for _, m := range modes {
				labels = append(labels, m.Label)
			}
			if strings.Join(labels, "|") != strings.Join(tt.modes, "|") {
				t.Errorf("modes = %q, want %q", labels, tt.modes)
			}
			if tt.best == "" {
				if best != nil {
					t.Errorf("best = %+v, want none", best)
				}
				return
			}
			if best == nil || best.Label != tt.best || best.Items.Max != tt.items {
				t.Errorf("best = %+v, want %s at %v", best, tt.best, tt.items)
			}
		})
	}
	// A mode whose repetitions differ by more than 2× is called disturbed.
	if got := disturbed(Served{{Title: "m", Raw: tests[1].give}}); len(got) != 1 || got[0] != "m, 2 sessions × 1 thread, batch 1 (2.0–150 items/s)" {
		t.Errorf("disturbed = %q", got)
	}
	if got := disturbed(Served{{Title: "m", Raw: tests[0].give}}); len(got) != 0 {
		t.Errorf("disturbed = %q", got)
	}
	// The batching target ignores the sessions runs.
	r := tests[0].give
	if s := r.Rows(1); s.N != 2 || s.Median != 1390 {
		t.Errorf("Rows(1) = %+v", s)
	}
	if got := r.Batches(); len(got) != 2 {
		t.Errorf("Batches() = %v", got)
	}
	if ratio, n := r.PairedRows(8, 1); n != 2 || ratio < 1.02 || ratio > 1.03 {
		t.Errorf("PairedRows(8, 1) = %v, %d", ratio, n)
	}
}

func TestWrkCounts(t *testing.T) {
	tests := []struct {
		name   string
		give   Wrk
		failed int64
		rps    float64
	}{
		{"all 200", Wrk{Requests: 2000, DurationUS: 2_000_000}, 0, 1000},
		{"400s", func() Wrk {
			w := Wrk{Requests: 9967, DurationUS: 1_000_000, Non200: 9967}
			w.Errors.Status = 9967
			return w
		}(), 9967, 0},
		{"socket errors", func() Wrk {
			w := Wrk{Requests: 100, DurationUS: 1_000_000, Non200: 10}
			w.Errors.Read, w.Errors.Timeout, w.Errors.Connect, w.Errors.Write = 1, 2, 3, 4
			return w
		}(), 20, 90},
		{"no duration", Wrk{Requests: 5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.give.Failed(); got != tt.failed {
				t.Errorf("Failed() = %d, want %d", got, tt.failed)
			}
			if got := tt.give.RPS(); got != tt.rps {
				t.Errorf("RPS() = %v, want %v", got, tt.rps)
			}
		})
	}
}

func TestServedTargets(t *testing.T) {
	ok := ServedLevel{Concurrency: 1, Bench: &bench.Report{Served: []bench.Level{lvl(1, 100, 1000)}}, Wrk: &Wrk{Requests: 100, DurationUS: 1e6}}
	bad := ServedLevel{Concurrency: 4, Bench: &bench.Report{Served: []bench.Level{{Concurrency: 4, Requests: 10, Errors: 2}}}, Wrk: &Wrk{Requests: 100, DurationUS: 1e6, Non200: 3}}
	tests := []struct {
		name     string
		give     Served
		result   string
		measured string
	}{
		{"all 200", Served{{Key: "cls", Title: "PaddleOCR cls", Levels: []ServedLevel{ok}}}, "**met**", "0 failed requests in 2 runs"},
		{"failures", Served{{Key: "cls", Title: "PaddleOCR cls", Levels: []ServedLevel{ok, bad}}}, "**missed**",
			"5 failed requests in 4 runs (PaddleOCR cls c=4 svc bench 2; PaddleOCR cls c=4 wrk 3)"},
		{"not run", nil, "not checked", "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ServedTargets(tt.give)
			if len(got) != 1 || got[0].result() != tt.result || got[0].Measured != tt.measured {
				t.Errorf("target = %s %q, want %s %q", got[0].result(), got[0].Measured, tt.result, tt.measured)
			}
		})
	}
}

func TestMemLoadTargets(t *testing.T) {
	report := func(body int, errs int64) *bench.Report {
		return &bench.Report{Settings: bench.Settings{BodyBytes: body}, Served: []bench.Level{{Concurrency: 4, Requests: 50, Errors: errs}}}
	}
	all := func(peak func(key string) int64, errs int64) []MemType {
		var out []MemType
		for _, t := range memTypes {
			out = append(out, MemType{Type: t.key, Concurrency: 4, IdleKiB: 60 * 1024, PeakKiB: peak(t.key), Run: report(1<<20, errs)})
		}
		return out
	}
	flat := func(string) int64 { return 60*1024 + 4*5*1024 } // 5× the bytes in flight
	strHeavy := func(k string) int64 {
		if k == "str" {
			return 60*1024 + 4*20*1024
		}
		return flat(k)
	}
	inflight := func(idle, peak int64, after ...int64) *MemInflight {
		return &MemInflight{Batch: 384, Concurrency: 16, IdleKiB: idle, PeakKiB: peak, EndKiB: peak, AfterKiB: after, Run: report(1<<20, 0)}
	}
	tests := []struct {
		name    string
		give    MemLoad
		results [3]string
		measure [3]string // substrings
	}{
		{"all met", MemLoad{Types: all(flat, 0), Inflight: inflight(90*1024, 90*1024+16*4*1024, 95*1024, 94*1024, 93*1024, 92*1024, 91*1024)},
			[3]string{"**met**", "**met**", "**met**"},
			[3]string{"14 types: from 5.0× (float32) to 5.0× (float32; peak 80.0 MiB over idle 60.0 MiB)", "4.0× (peak − idle 64.0 MiB over 16 requests of 1.00 MiB)", "+1.1 % (idle 90.0 MiB, peak 154.0 MiB, 5 s after 91.0 MiB: 98 % of what the burst added given back)"}},
		{"strings over, memory kept", MemLoad{Types: all(strHeavy, 0), Inflight: inflight(90*1024, 90*1024+16*10*1024, 250*1024, 250*1024, 250*1024, 250*1024, 250*1024)},
			[3]string{"**missed**", "**missed**", "**missed**"},
			[3]string{"to 20.0× (string; peak 140.0 MiB over idle 60.0 MiB); over 8×: string 20.0×", "10.0× (peak − idle 160.0 MiB", "+177.8 % (idle 90.0 MiB, peak 250.0 MiB, 5 s after 250.0 MiB: 0 % of what the burst added given back)"}},
		{"types missing, errors, short settle", MemLoad{Types: all(flat, 1)[:2], Inflight: inflight(90*1024, 100*1024, 91*1024)},
			[3]string{"**missed**", "**met**", "**missed**"},
			[3]string{"; not measured: float16, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, string; 2 failed requests", "0.6× (peak − idle 10.0 MiB", "1 s after 91.0 MiB"}},
		{"nothing", MemLoad{}, [3]string{"not checked", "not checked", "not checked"}, [3]string{"not measured", "not measured", "not measured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MemLoadTargets(tt.give)
			if len(got) != 3 || got[0].Key != "mem-types" || got[1].Key != "mem-inflight" || got[2].Key != "mem-burst" {
				t.Fatalf("targets = %+v", got)
			}
			for i, g := range got {
				if g.result() != tt.results[i] || !strings.Contains(g.Measured, tt.measure[i]) {
					t.Errorf("%s: %s %q, want %s with %q", g.Key, g.result(), g.Measured, tt.results[i], tt.measure[i])
				}
			}
		})
	}
}

// TestWriteLoadGolden renders the served and memory sections of the
// fixture artifacts and compares them with testdata/load.golden.md
// (go test ./cmd/benchreport -run TestWriteLoadGolden -update rewrites it).
func TestWriteLoadGolden(t *testing.T) {
	var d Data
	var err error
	if d.Served, err = readServed(loadDir); err != nil {
		t.Fatal(err)
	}
	if d.MemLoad, err = readMemLoad(loadDir); err != nil {
		t.Fatal(err)
	}
	if len(d.MemLoad.Types) != 3 || d.MemLoad.Inflight == nil || d.MemLoad.Inflight.Run == nil {
		t.Fatalf("memory = %+v", d.MemLoad)
	}
	var b bytes.Buffer
	b.WriteString("| target | measured | result |\n|---|---|---|\n")
	targets := append(ServedTargets(d.Served), MemLoadTargets(d.MemLoad)...)
	for _, tg := range targets {
		b.WriteString("| " + tg.Goal + " | " + tg.Measured + " | " + tg.result() + " |\n")
	}
	b.WriteString("\n")
	writeWhy(&b, targets, d)
	writeServed(&b, d.Served, 2)
	writeMemLoad(&b, d.MemLoad)
	checkGolden(t, "load.golden.md", b.Bytes())
}
