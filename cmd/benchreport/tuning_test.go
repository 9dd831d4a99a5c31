package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// rep is one svc bench run: levels as (concurrency, req/s, p50 µs).
func rep(levels ...[3]float64) bench.Report {
	r := bench.Report{Machine: bench.Machine{CPUs: 2}}
	for _, l := range levels {
		r.Served = append(r.Served, lvl(int(l[0]), l[1], l[2]))
	}
	return r
}

// reps builds n repetitions with throughput at c=32 and p50 at c=1 taken
// from the lists.
func reps(rps32, p50c1 []float64) []bench.Report {
	var out []bench.Report
	for i := range rps32 {
		out = append(out, rep([3]float64{1, 250, p50c1[i]}, [3]float64{8, 450, 16000}, [3]float64{32, rps32[i], 60000}))
	}
	return out
}

func rawBatch(rows1, rows8 []float64) *RawBatch {
	r := &RawBatch{}
	add := func(b int64, rows []float64) {
		for i, v := range rows {
			r.Runs = append(r.Runs, RawRun{Rep: i + 1, Batch: b, RowsPerS: v, Level: lvl(1, v/float64(b), 1000)})
		}
	}
	add(1, rows1)
	add(8, rows8)
	return r
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9}, 2},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
}

func TestSummarize(t *testing.T) {
	rs := []bench.Report{
		rep([3]float64{1, 100, 900}, [3]float64{8, 400, 5000}),
		rep([3]float64{1, 120, 800}),
		rep([3]float64{1, 90, 1000}, [3]float64{8, 500, 4000}),
	}
	s := summarize(rs, 1, p50)
	if s.N != 3 || s.Median != 900 || s.Min != 800 || s.Max != 1000 {
		t.Fatalf("c=1 p50 = %+v", s)
	}
	if s := summarize(rs, 8, throughput); s.N != 2 || s.Median != 450 {
		t.Fatalf("c=8 throughput = %+v (two runs have the level)", s)
	}
	if s := summarize(rs, 32, throughput); s.ok() {
		t.Fatalf("c=32 = %+v, want none", s)
	}
	// A level where every request failed gives no value but counts errors.
	failed := rep([3]float64{1, 0, 0})
	failed.Served[0].Errors = failed.Served[0].Requests
	if s := summarize([]bench.Report{failed}, 1, p50); s.ok() || s.Errors != 100 {
		t.Fatalf("failed level = %+v", s)
	}
}

func TestAmdahl(t *testing.T) {
	for _, tt := range []struct{ f, g, want float64 }{
		{1, 1, 1},         // everything twice as fast
		{0, 5, 0},         // nothing gets faster
		{0.5, 1, 1.0 / 3}, // half the work at half the cost: 1/0.75 − 1
	} {
		if got := amdahl(tt.f, tt.g); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("amdahl(%v, %v) = %v, want %v", tt.f, tt.g, got, tt.want)
		}
	}
}

func TestBatchingTargets(t *testing.T) {
	tests := []struct {
		name         string
		on, off      []bench.Report
		raw          *RawBatch
		gain, p50    string // want result()
		gainMeasured string // a substring of Measured
		gainMiss     string // a substring of Miss ("" = no Miss)
		p50Miss      string
		sideOn       []bench.Report // side-by-side runs, when they ran
		sideOff      []bench.Report
		p50Measured  string // a substring of the p50 target's Measured
	}{
		{
			name: "both met",
			// served +40 %, raw +40 %: ratio 1.0; p50 +2 %.
			on:   reps([]float64{700, 690, 710}, []float64{1020, 1000, 1040}),
			off:  reps([]float64{500, 480, 520}, []float64{1000, 990, 1010}),
			raw:  rawBatch([]float64{100, 90, 110}, []float64{140, 130, 150}),
			gain: "**met**", p50: "**met**",
			gainMeasured: "1.00 (served gain +40.0 %, in-process gain +40.0 %; the medians over the rounds of on ÷ off and of batch 8 ÷ batch 1. Medians: served 700/s on, 500/s off; in process 140 rows/s at batch 8, 100 at batch 1)",
		},
		{
			name: "both missed",
			// served +10 %, raw +50 %: ratio 0.2; p50 +10 %.
			on:   reps([]float64{550}, []float64{1100}),
			off:  reps([]float64{500}, []float64{1000}),
			raw:  rawBatch([]float64{100}, []float64{150}),
			gain: "**missed**", p50: "**missed**",
			gainMeasured: "0.20 (",
			gainMiss:     "0.60 (a ratio of 0.20 against 0.80): the served gain would have to be +40.0 %, it is +10.0 %",
			p50Miss:      "5.0 percentage points: p50 +10.0 % against the +5 % allowed",
		},
		{
			// The load drifts between the rounds: round by round batching
			// gains +40, +10 and +20 %; the medians of each side alone
			// would say +40 %.
			name: "paired by round",
			on:   reps([]float64{560, 1100, 300}, []float64{1000, 1000, 1000}),
			off:  reps([]float64{400, 1000, 250}, []float64{1000, 1000, 1000}),
			raw:  rawBatch([]float64{100, 200, 50}, []float64{150, 240, 80}), // +50, +20, +60 %
			gain: "**missed**", p50: "**met**",
			gainMeasured: "0.40 (served gain +20.0 %, in-process gain +50.0 %;",
			gainMiss:     "the served gain would have to be +40.0 %, it is +20.0 %",
		},
		{
			// The side-by-side pairs measure p50 when they ran: here
			// 0.99 and 1.02 against the rounds' +10 %.
			name:    "side by side",
			on:      reps([]float64{550}, []float64{1100}),
			off:     reps([]float64{500}, []float64{1000}),
			raw:     rawBatch([]float64{100}, []float64{150}),
			sideOn:  reps([]float64{1, 1, 1}, []float64{1980, 2040, 2000}),
			sideOff: reps([]float64{1, 1, 1}, []float64{2000, 2000, 2010}),
			gain:    "**missed**", p50: "**met**",
			gainMeasured: "0.20 (",
			gainMiss:     "0.60 (a ratio of 0.20 against 0.80)",
			p50Measured:  "0.995 (the median over 3 pairs of runs on two servers side by side of on ÷ off; medians: on 2.00ms, off 2.00ms)",
		},
		{
			name: "rounds when no pair ran",
			on:   reps([]float64{550}, []float64{1100}),
			off:  reps([]float64{500}, []float64{1000}),
			raw:  rawBatch([]float64{100}, []float64{150}),
			// an off run without its on run pairs with nothing
			sideOff: reps([]float64{1}, []float64{2000}),
			gain:    "**missed**", p50: "**missed**",
			gainMeasured: "0.20 (",
			gainMiss:     "0.60 (a ratio of 0.20 against 0.80)",
			p50Miss:      "5.0 percentage points",
			p50Measured:  "1.100 (the median over 1 rounds of on ÷ off",
		},
		{
			name: "batching slower",
			on:   reps([]float64{450}, []float64{990}),
			off:  reps([]float64{500}, []float64{1000}),
			raw:  rawBatch([]float64{100}, []float64{150}),
			gain: "**missed**", p50: "**met**",
			gainMeasured: "-0.20 (",
			gainMiss:     "it is -10.0 %",
		},
		{
			name: "no raw gain",
			on:   reps([]float64{550}, []float64{1000}),
			off:  reps([]float64{500}, []float64{1000}),
			raw:  rawBatch([]float64{100}, []float64{95}),
			gain: "not checked", p50: "**met**",
			gainMeasured: "ONNX Runtime shows no gain from batching",
		},
		{
			name: "no raw runs",
			on:   reps([]float64{550}, []float64{1000}),
			off:  reps([]float64{500}, []float64{1000}),
			gain: "not checked", p50: "**met**",
			gainMeasured: "not measured",
		},
		{
			name: "no served runs",
			raw:  rawBatch([]float64{100}, []float64{150}),
			gain: "not checked", p50: "not checked",
			gainMeasured: "not measured",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BatchingTargets(Tuning{"default": tt.on, "nobatch": tt.off, sideOn: tt.sideOn, sideOff: tt.sideOff}, tt.raw)
			if len(got) != 2 {
				t.Fatalf("%d targets", len(got))
			}
			g, p := got[0], got[1]
			if g.result() != tt.gain || p.result() != tt.p50 {
				t.Errorf("results %s (%s), %s (%s); want %s, %s", g.result(), g.Measured, p.result(), p.Measured, tt.gain, tt.p50)
			}
			if !strings.Contains(g.Measured, tt.gainMeasured) {
				t.Errorf("gain measured = %q, want it to contain %q", g.Measured, tt.gainMeasured)
			}
			if (tt.gainMiss == "") != (g.Miss == "") || !strings.Contains(g.Miss, tt.gainMiss) {
				t.Errorf("gain miss = %q, want %q", g.Miss, tt.gainMiss)
			}
			if !strings.Contains(p.Measured, tt.p50Measured) {
				t.Errorf("p50 measured = %q, want it to contain %q", p.Measured, tt.p50Measured)
			}
			if (tt.p50Miss == "") != (p.Miss == "") || !strings.Contains(p.Miss, tt.p50Miss) {
				t.Errorf("p50 miss = %q, want %q", p.Miss, tt.p50Miss)
			}
		})
	}
}

// scaled returns the rounds of def with p50 at c=1 and throughput at c=8
// multiplied by the factors of each round.
func scaled(def []bench.Report, p50f, rpsf []float64) []bench.Report {
	var out []bench.Report
	for k, d := range def {
		if k >= len(p50f) {
			break
		}
		c1, c8 := level(d.Served, 1), level(d.Served, 8)
		out = append(out, rep([3]float64{1, c1.ThroughputRPS, c1.LatencyUS.P50 * p50f[k]}, [3]float64{8, c8.ThroughputRPS * rpsf[k], c8.LatencyUS.P50}))
	}
	return out
}

func TestCompareAndVerdict(t *testing.T) {
	// The machine's load drifts between the rounds: the defaults' own
	// numbers vary by ±25 %.
	def := []bench.Report{
		rep([3]float64{1, 250, 4000}, [3]float64{8, 500, 16000}),
		rep([3]float64{1, 330, 3000}, [3]float64{8, 640, 12500}),
		rep([3]float64{1, 200, 5000}, [3]float64{8, 400, 20000}),
		rep([3]float64{1, 285, 3500}, [3]float64{8, 560, 14300}),
	}
	all := func(f float64) []float64 { return []float64{f, f, f, f} }
	tests := []struct {
		name     string
		p50, rps []float64 // factors per round
		rounds   int
		want     []string
		v        Verdict
		advice   string
	}{
		{
			// Unpaired, the ranges overlap; round by round it is clear.
			name: "faster everywhere", p50: all(0.8), rps: all(1.2),
			want:   []string{"c=1 p50 +20 % (better; better in 4 of 4 rounds)", "c=8 req/s +20 % (better; better in 4 of 4 rounds)"},
			v:      Better,
			advice: "is clearly better (c=1 p50 +20 %, c=8 req/s +20 %) and not worse on anything measured: this run supports changing the default",
		},
		{
			name: "trade-off", p50: all(0.85), rps: all(0.6),
			want:   []string{"c=1 p50 +15 % (better; better in 4 of 4 rounds)", "c=8 req/s -40 % (worse; better in 0 of 4 rounds)"},
			v:      TradeOff,
			advice: "trades c=8 req/s -40 % for c=1 p50 +15 %",
		},
		{
			name: "one round disagrees", p50: []float64{0.8, 0.8, 0.8, 1.05}, rps: all(1),
			want:   []string{"c=1 p50 +20 % (probably better; better in 3 of 4 rounds)", "c=8 req/s +0 % (within noise; better in 0 of 4 rounds)"},
			v:      KeepDefault,
			advice: "shows no clear difference (probably better: c=1 p50 +20 %): keep the default",
		},
		{
			name: "better, and probably better", p50: all(0.8), rps: []float64{1.2, 1.2, 1.2, 0.95},
			want:   []string{"c=1 p50 +20 % (better; better in 4 of 4 rounds)", "c=8 req/s +20 % (probably better; better in 3 of 4 rounds)"},
			v:      Better,
			advice: "is clearly better (c=1 p50 +20 %; probably also c=8 req/s +20 %) and not worse on anything measured",
		},
		{
			// A probable loss is enough to make it a trade.
			name: "better, and probably worse", p50: all(0.8), rps: []float64{0.8, 0.8, 0.8, 1.1},
			want:   []string{"c=1 p50 +20 % (better; better in 4 of 4 rounds)", "c=8 req/s -20 % (probably worse; better in 1 of 4 rounds)"},
			v:      TradeOff,
			advice: "trades c=8 req/s -20 % for c=1 p50 +20 %",
		},
		{
			name: "worse, and probably worse", p50: all(1.25), rps: []float64{0.5, 0.5, 0.5, 1.1},
			want:   []string{"c=1 p50 -25 % (worse; better in 0 of 4 rounds)", "c=8 req/s -50 % (probably worse; better in 1 of 4 rounds)"},
			v:      KeepDefault,
			advice: "is clearly worse (c=1 p50 -25 %; probably also c=8 req/s -50 %): keep the default",
		},
		{
			name: "small but consistent", p50: all(0.97), rps: all(1.04),
			want:   []string{"c=1 p50 +3 % (within noise; better in 4 of 4 rounds)", "c=8 req/s +4 % (within noise; better in 4 of 4 rounds)"},
			v:      KeepDefault,
			advice: "shows no clear difference",
		},
		{
			name: "worse", p50: all(1.25), rps: all(0.5),
			want:   []string{"c=1 p50 -25 % (worse; better in 0 of 4 rounds)", "c=8 req/s -50 % (worse; better in 0 of 4 rounds)"},
			v:      KeepDefault,
			advice: "is clearly worse (c=1 p50 -25 %, c=8 req/s -50 %): keep the default",
		},
		{
			name: "too few rounds", p50: all(0.5), rps: all(2), rounds: 3,
			want:   []string{"c=1 p50 +50 % (within noise; better in 3 of 3 rounds)", "c=8 req/s +100 % (within noise; better in 3 of 3 rounds)"},
			v:      KeepDefault,
			advice: "shows no clear difference",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p50f, rpsf := tt.p50, tt.rps
			if tt.rounds > 0 {
				p50f, rpsf = p50f[:tt.rounds], rpsf[:tt.rounds]
			}
			alt := scaled(def, p50f, rpsf)
			cs := compare(alt, def)
			var got []string
			for _, c := range cs {
				got = append(got, c.String())
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("compare = %q, want %q", got, tt.want)
			}
			if v, _ := verdict(cs); v != tt.v {
				t.Errorf("verdict = %v, want %v", v, tt.v)
			}
			advice := recommend(Tuning{"default": def, "threads1": alt}, []string{"threads1"})
			if !strings.HasPrefix(advice, "1 intra-op thread ") || !strings.Contains(advice, tt.advice) {
				t.Errorf("recommend = %q, want it to contain %q", advice, tt.advice)
			}
		})
	}
	if got := recommend(Tuning{"default": def}, []string{"spinning"}); got != "not measured." {
		t.Errorf("recommend without runs = %q", got)
	}
	// A round missing on one side is left out of the pairs.
	alt := scaled(def, all(0.8), all(1.2))
	alt[1] = bench.Report{}
	if cs := compare(alt, def); len(cs) != 2 || cs[0].Rounds != 3 || cs[0].Clear {
		t.Errorf("with a round missing: %+v", cs)
	}
}

func TestWriteTuningAndBatching(t *testing.T) {
	// Four rounds of the same numbers.
	four := func(r bench.Report) []bench.Report { return []bench.Report{r, r, r, r} }
	def := four(rep([3]float64{1, 250, 4000}, [3]float64{8, 500, 16000}, [3]float64{32, 550, 58000}))
	tune := Tuning{
		"default":  def,
		"nobatch":  four(rep([3]float64{1, 248, 4050}, [3]float64{8, 430, 17000}, [3]float64{32, 470, 62000})),
		"workers2": four(rep([3]float64{1, 260, 3600}, [3]float64{8, 600, 13000})),
		sideOn:     []bench.Report{rep([3]float64{1, 250, 2100}), rep([3]float64{1, 250, 1900})},
		sideOff:    []bench.Report{rep([3]float64{1, 250, 2000}), rep([3]float64{1, 250, 2000})},
	}
	raw := rawBatch([]float64{600, 640, 620}, []float64{896, 880, 920})
	raw.Runs = append(raw.Runs, raw.Runs[0])
	raw.Runs[len(raw.Runs)-1].Batch, raw.Runs[len(raw.Runs)-1].RowsPerS = 32, 1280
	raw.ModelFile, raw.Input, raw.Shape, raw.DurationS = "m.onnx", "x", []int64{1, 3, 48, 192}, 2

	var b bytes.Buffer
	writeBatching(&b, tune, raw)
	writeTuning(&b, tune)
	md := b.String()
	for _, want := range []string{
		"in the 4 rounds of the session settings below",
		"| on (default) | 4.00ms (4.00ms–4.00ms) | 250 (250–250) | 500 (500–500) | 550 (550–550) | 58.00ms (58.00ms–58.00ms) |",
		"| off | 4.05ms (4.05ms–4.05ms) |",
		"loaded in turn by 2 pairs of short runs, the order alternating, so that both meet the same moments of the machine. p50 with batching on 2.00ms (1.90ms–2.10ms), off 2.00ms (2.00ms–2.00ms); on ÷ off, the median over the pairs: 1.000.",
		"input x of shape [1, 3, 48, 192]",
		"| 1 | 620 | 620 (600–640) | +0 % |",
		"| 8 | 112 | 896 (880–920) | +45 % |",
		"| 32 | 40.0 | 1280 | +106 % |",
		"| defaults | none:",
		"| 2 workers | `--workers 2`",
		"c=1 p50 +10 % (better; better in 4 of 4 rounds); c=8 req/s +20 % (better; better in 4 of 4 rounds)",
		"- `runtime.spinning`, now false: not measured.",
		// 5 comparisons (nobatch 3, workers2 2) over 4 rounds: 5 × 2 × 0.5^4 ≈ 0.6.
		"With 5 comparisons in this table, about 0.6 would come out clear by chance alone",
		"- `serve.workers`, now 1: 2 workers is clearly better",
		"- `batching.enabled`, now true: batching off is clearly worse (c=8 req/s -14 %, c=32 req/s -15 %): keep the default.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("output lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"| 1 intra-op thread |", "| spinning on |", "the default already runs 1 thread per run"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("output has a row for a setting that did not run: %q", unwanted)
		}
	}

	// With 2 threads measured on a 2-core machine, the note on noise.
	b.Reset()
	tune["threads1"] = def
	writeTuning(&b, tune)
	if !strings.Contains(b.String(), "1 intra-op thread shows no clear difference: keep the default. On this 2-core machine the default already runs 1 thread per run") {
		t.Errorf("no note on 2 threads:\n%s", b.String())
	}

	b.Reset()
	writeTuning(&b, Tuning{})
	writeBatching(&b, Tuning{}, nil)
	if got := b.String(); strings.Count(got, "Not measured.") != 2 {
		t.Errorf("empty sections:\n%s", got)
	}
}
