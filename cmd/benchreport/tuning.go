package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// Files of the batching and tuning runs.
const (
	// fileTunePattern names one repetition of one setting:
	// tune-NAME-rK.json, a svc bench --json report.
	fileTunePattern = "tune-%s-r*.json"
	// fileSidePattern names one of the side-by-side runs at concurrency
	// 1: side-on-rK.json (batching on, the defaults) and side-off-rK.json
	// (batching off), the two of round K run one after the other against
	// two servers that run side by side.
	fileSidePattern = "side-%s-r*.json"
	// fileRawBatch is the output of cmd/rawbatch.
	fileRawBatch = "rawbatch.json"
)

// Batching targets and the threshold of a clear difference.
const (
	batchGainShare   = 0.80
	batchP50MaxRatio = 1.05
	batchConcurrency = 32
	rawBatchSize     = 8
	// clearDelta is the smallest relative difference called clear (the
	// repetitions' ranges must not overlap as well).
	clearDelta = 0.05
)

// Setting is one configuration of the tuning runs.
type Setting struct {
	Name   string // file name part: tune-NAME-rK.json
	Label  string
	Change string // what differs from the defaults
}

// Settings lists the tuning runs in table order; "default" comes first and
// the others are compared with it.
var Settings = []Setting{
	{"default", "defaults", "none: half the cores as intra-op threads (1 on 2 cores) with as many runs in flight as fill the cores, spinning off, batching on (max_batch_size 32), 1 worker, Go with one processor per core and one more while the runs are long (GOMAXPROCS 2, then 3, on 2 cores)"},
	{"nobatch", "batching off", "`batching.enabled: false`"},
	{"threads1", "1 intra-op thread", "`runtime.intra_op_threads: 1`"},
	{"threads2", "2 intra-op threads", "`runtime.intra_op_threads: 2`"},
	{"spinning", "spinning on", "`runtime.spinning: true`"},
	{"workers2", "2 workers", "`--workers 2`: two processes, each with its own session and 1 intra-op thread (cores ÷ workers)"},
}

// Tuning holds the rounds of each setting, by name: element k is round
// k+1 (tune-NAME-r<k+1>.json); a round that did not run is an empty
// report. The side-by-side runs are there too, as sideOn and sideOff.
type Tuning map[string][]bench.Report

// The side-by-side runs' names in Tuning (and in their files).
const (
	sideOn  = "on"
	sideOff = "off"
)

var roundFile = regexp.MustCompile(`-r([0-9]+)\.json$`)

// readTuning reads every tune-NAME-rK.json of the known settings, and
// the side-by-side runs (side-on-rK.json, side-off-rK.json) as the
// entries sideOn and sideOff.
func readTuning(dir string) (Tuning, error) {
	t := Tuning{}
	names := map[string]string{sideOn: fileSidePattern, sideOff: fileSidePattern}
	for _, s := range Settings {
		names[s.Name] = fileTunePattern
	}
	for name, pattern := range names {
		reps, err := readRounds(dir, fmt.Sprintf(pattern, name))
		if err != nil {
			return nil, err
		}
		if len(reps) > 0 {
			t[name] = reps
		}
	}
	return t, nil
}

// readRounds reads the svc bench reports of the files matching pattern
// (which ends in -r*.json): element k is round k+1, an empty report for a
// round with no file.
func readRounds(dir, pattern string) ([]bench.Report, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	var reps []bench.Report
	for _, f := range files {
		m := roundFile.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		k, err := strconv.Atoi(m[1])
		if err != nil || k < 1 || k > 1000 {
			continue
		}
		var r bench.Report
		if _, err := readJSON(dir, filepath.Base(f), &r); err != nil {
			return nil, err
		}
		for len(reps) < k {
			reps = append(reps, bench.Report{})
		}
		reps[k-1] = r
	}
	return reps, nil
}

// rounds counts the rounds that ran.
func rounds(reps []bench.Report) int {
	n := 0
	for _, r := range reps {
		if len(r.Served) > 0 {
			n++
		}
	}
	return n
}

// Stat summarises one number over the repetitions.
type Stat struct {
	Median, Min, Max float64
	N                int
	// Errors counts failed requests of the level over the repetitions.
	Errors int64
}

func (s Stat) ok() bool { return s.N > 0 }

// summarize takes metric of the served level at concurrency c of every
// repetition.
func summarize(reps []bench.Report, c int, metric func(bench.Level) float64) Stat {
	var vals []float64
	var errs int64
	for _, r := range reps {
		if l := level(r.Served, c); l != nil {
			errs += l.Errors
			if l.Requests > l.Errors {
				vals = append(vals, metric(*l))
			}
		}
	}
	return statOf(vals, errs)
}

func statOf(vals []float64, errs int64) Stat {
	if len(vals) == 0 {
		return Stat{Errors: errs}
	}
	return Stat{Median: median(vals), Min: slices.Min(vals), Max: slices.Max(vals), N: len(vals), Errors: errs}
}

// median of vals (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func throughput(l bench.Level) float64 { return l.ThroughputRPS }
func p50(l bench.Level) float64        { return l.LatencyUS.P50 }

// RawBatch is what rawbatch writes.
type RawBatch struct {
	ModelFile      string   `json:"model_file"`
	Input          string   `json:"input"`
	Shape          []int64  `json:"shape"`
	DurationS      float64  `json:"duration_s"`
	IntraOpThreads int      `json:"intra_op_threads"`
	Spinning       bool     `json:"spinning"`
	Runs           []RawRun `json:"runs"`
	Machine        struct {
		CPUs int `json:"cpus"`
	} `json:"machine"`
}

// RawRun is one batch size in one repetition; with Sessions > 0, that
// many sessions of Threads intra-op threads each, one closed loop each.
type RawRun struct {
	Rep      int         `json:"rep"`
	Batch    int64       `json:"batch"`
	Sessions int         `json:"sessions,omitempty"`
	Threads  int         `json:"threads,omitempty"`
	RowsPerS float64     `json:"rows_per_s"`
	Level    bench.Level `json:"level"`
}

// Rows summarises rows/s at batch b on the one session over the
// repetitions.
func (r *RawBatch) Rows(b int64) Stat {
	var vals []float64
	var errs int64
	for _, run := range r.Runs {
		if run.Batch == b && run.Sessions == 0 {
			errs += run.Level.Errors
			vals = append(vals, run.RowsPerS)
		}
	}
	return statOf(vals, errs)
}

// Batches lists the measured batch sizes in increasing order.
func (r *RawBatch) Batches() []int64 {
	var out []int64
	for _, run := range r.Runs {
		if run.Sessions == 0 && !slices.Contains(out, run.Batch) {
			out = append(out, run.Batch)
		}
	}
	slices.Sort(out)
	return out
}

// gain is b/a − 1.
func gain(b, a float64) float64 { return b/a - 1 }

// amdahl is the throughput gain when a fraction f of the work gets g
// faster (throughput × (1+g)) and the rest stays as it is.
func amdahl(f, g float64) float64 { return 1/(1-f+f/(1+g)) - 1 }

// pairedRatios are num's metric ÷ den's at concurrency c, round by round,
// pairing the runs of the same round (they ran within a minute of each
// other, so the machine's drifting load cancels out); rounds where either
// side has no successful run at c are left out.
func pairedRatios(num, den []bench.Report, c int, metric func(bench.Level) float64) []float64 {
	var rs []float64
	for k := 0; k < len(num) && k < len(den); k++ {
		a, d := level(num[k].Served, c), level(den[k].Served, c)
		if a == nil || d == nil || a.Errors >= a.Requests || d.Errors >= d.Requests || metric(*d) == 0 {
			continue
		}
		rs = append(rs, metric(*a)/metric(*d))
	}
	return rs
}

// pairedRatio is the median of pairedRatios; n counts the pairs.
func pairedRatio(num, den []bench.Report, c int, metric func(bench.Level) float64) (ratio float64, n int) {
	rs := pairedRatios(num, den, c, metric)
	if len(rs) == 0 {
		return 0, 0
	}
	return median(rs), len(rs)
}

// PairedRows is the median over the repetitions of rows/s at batch b ÷
// rows/s at batch base in the same repetition; n counts the pairs.
func (r *RawBatch) PairedRows(b, base int64) (ratio float64, n int) {
	num, den := map[int]float64{}, map[int]float64{}
	for _, run := range r.Runs {
		if run.Sessions > 0 {
			continue
		}
		switch run.Batch {
		case b:
			num[run.Rep] = run.RowsPerS
		case base:
			den[run.Rep] = run.RowsPerS
		}
	}
	var rs []float64
	for rep, v := range num {
		if d, ok := den[rep]; ok && d > 0 {
			rs = append(rs, v/d)
		}
	}
	if len(rs) == 0 {
		return 0, 0
	}
	return median(rs), len(rs)
}

// batchingGains are the two gains of the batching target: served at
// concurrency 32, on over off, and in process, batch 8 over batch 1 in
// rows/s; each the median over the rounds of the paired ratio, minus 1.
func batchingGains(t Tuning, raw *RawBatch) (served, inProcess float64, ok bool) {
	rb, nb := pairedRatio(t["default"], t["nobatch"], batchConcurrency, throughput)
	if nb == 0 || raw == nil {
		return 0, 0, false
	}
	rr, nr := raw.PairedRows(rawBatchSize, 1)
	if nr == 0 {
		return 0, 0, false
	}
	return rb - 1, rr - 1, true
}

// batchP50Runs are the runs that measure p50 at concurrency 1 with
// batching on and off: the side-by-side pairs when they ran (side), the
// tuning rounds otherwise.
func batchP50Runs(t Tuning) (on, off []bench.Report, side bool) {
	if len(pairedRatios(t[sideOn], t[sideOff], 1, p50)) > 0 {
		return t[sideOn], t[sideOff], true
	}
	return t["default"], t["nobatch"], false
}

// BatchingTargets checks the batching goals against the tuning runs
// (default and nobatch) and the in-process runs.
func BatchingTargets(t Tuning, raw *RawBatch) []Target {
	t1 := Target{Key: "batch-gain", Goal: fmt.Sprintf("PaddleOCR cls, concurrency %d: served gain from batching (on ÷ off − 1) ≥ %.0f %% of ONNX Runtime's in-process gain at batch %d over batch 1 (rows/s)", batchConcurrency, batchGainShare*100, rawBatchSize), Measured: "not measured"}
	on := summarize(t["default"], batchConcurrency, throughput)
	off := summarize(t["nobatch"], batchConcurrency, throughput)
	if gb, gr, ok := batchingGains(t, raw); ok {
		r1, r8 := raw.Rows(1), raw.Rows(rawBatchSize)
		detail := fmt.Sprintf("served gain %+.1f %%, in-process gain %+.1f %%; the medians over the rounds of on ÷ off and of batch %d ÷ batch 1. Medians: served %.0f/s on, %.0f/s off; in process %.0f rows/s at batch %d, %.0f at batch 1",
			gb*100, gr*100, rawBatchSize, on.Median, off.Median, r8.Median, rawBatchSize, r1.Median)
		switch {
		case gr <= 0:
			t1.Measured = detail + "; ONNX Runtime shows no gain from batching, so there is nothing to reach"
		default:
			ratio := gb / gr
			t1.Measured = fmt.Sprintf("%.2f (%s)", ratio, detail)
			t1.Met = met(ratio >= batchGainShare && on.Errors+off.Errors == 0)
			if ratio < batchGainShare {
				t1.Miss = fmt.Sprintf("%.2f (a ratio of %.2f against %.2f): the served gain would have to be %+.1f %%, it is %+.1f %%",
					batchGainShare-ratio, ratio, batchGainShare, batchGainShare*gr*100, gb*100)
			}
		}
		if n := on.Errors + off.Errors; n > 0 {
			t1.Measured += fmt.Sprintf("; %d errors", n)
			t1.Met = met(false)
		}
	}
	t2 := Target{Key: "batch-p50", Goal: fmt.Sprintf("PaddleOCR cls, concurrency 1: p50 with batching on ≤ %.2f × p50 with batching off", batchP50MaxRatio), Measured: "not measured"}
	onRuns, offRuns, side := batchP50Runs(t)
	how := "rounds"
	if side {
		how = "pairs of runs on two servers side by side"
	}
	on1 := summarize(onRuns, 1, p50)
	off1 := summarize(offRuns, 1, p50)
	if ratio, n := pairedRatio(onRuns, offRuns, 1, p50); n > 0 {
		t2.Measured = fmt.Sprintf("%.3f (the median over %d %s of on ÷ off; medians: on %s, off %s)", ratio, n, how, bench.FormatMicros(on1.Median), bench.FormatMicros(off1.Median))
		t2.Met = met(ratio <= batchP50MaxRatio && on1.Errors+off1.Errors == 0)
		if ratio > batchP50MaxRatio {
			t2.Miss = fmt.Sprintf("%.1f percentage points: p50 %+.1f %% against the %+.0f %% allowed", (ratio-batchP50MaxRatio)*100, (ratio-1)*100, (batchP50MaxRatio-1)*100)
		}
		if n := on1.Errors + off1.Errors; n > 0 {
			t2.Measured += fmt.Sprintf("; %d errors", n)
		}
	}
	return []Target{t1, t2}
}

// Comparison is one metric of a setting against the defaults, round by
// round: the two ran within a minute of each other in each round, so the
// machine's drifting load cancels out of their ratio.
type Comparison struct {
	Metric string
	// Delta is the median over the rounds of the relative change, signed
	// so that positive is better.
	Delta float64
	// Better counts the rounds where the setting did better, of Rounds.
	Better, Rounds int
	// Clear is true when |Delta| ≥ clearDelta and every round, at least
	// clearMinRounds of them, agrees on the direction; Likely when all
	// but one do.
	Clear, Likely bool
}

// clearMinRounds is the fewest rounds that can make a difference clear
// (all agreeing: a 1 in 8 chance for a coin).
const clearMinRounds = 4

func (c Comparison) String() string {
	word := "within noise"
	switch {
	case c.Clear && c.Delta > 0:
		word = "better"
	case c.Clear:
		word = "worse"
	case c.Likely && c.Delta > 0:
		word = "probably better"
	case c.Likely:
		word = "probably worse"
	}
	return fmt.Sprintf("%s %+.0f %% (%s; better in %d of %d rounds)", c.Metric, c.Delta*100, word, c.Better, c.Rounds)
}

// metricSpec is a compared metric: the level, what, and whether higher is
// better.
type metricSpec struct {
	name     string
	c        int
	f        func(bench.Level) float64
	higherOK bool
}

var compared = []metricSpec{
	{"c=1 p50", 1, p50, false},
	{"c=8 req/s", 8, throughput, true},
	{"c=32 req/s", 32, throughput, true},
}

// compare compares a setting with the defaults on every metric both have,
// pairing the runs of the same round.
func compare(alt, def []bench.Report) []Comparison {
	var out []Comparison
	for _, m := range compared {
		var deltas []float64
		better := 0
		for k := 0; k < len(alt) && k < len(def); k++ {
			a, d := level(alt[k].Served, m.c), level(def[k].Served, m.c)
			if a == nil || d == nil || a.Errors >= a.Requests || d.Errors >= d.Requests || m.f(*d) == 0 {
				continue
			}
			delta := m.f(*a)/m.f(*d) - 1
			if !m.higherOK {
				delta = -delta
			}
			if delta > 0 {
				better++
			}
			deltas = append(deltas, delta)
		}
		if len(deltas) == 0 {
			continue
		}
		c := Comparison{Metric: m.name, Delta: median(deltas), Better: better, Rounds: len(deltas)}
		agreeing := better
		if c.Delta < 0 {
			agreeing = c.Rounds - better
		}
		big := c.Rounds >= clearMinRounds && math.Abs(c.Delta) >= clearDelta
		c.Clear = big && agreeing == c.Rounds
		c.Likely = big && agreeing == c.Rounds-1
		out = append(out, c)
	}
	return out
}

// Verdict sums up a setting against the defaults.
type Verdict int

// Verdicts.
const (
	KeepDefault Verdict = iota // nothing clearly better
	TradeOff                   // something clearly better, something clearly or probably worse
	Better                     // something clearly better, nothing clearly or probably worse
)

// Findings sorts the comparisons that are not noise.
type Findings struct {
	Better, ProbablyBetter, Worse, ProbablyWorse []Comparison
}

func verdict(cs []Comparison) (Verdict, Findings) {
	var f Findings
	for _, c := range cs {
		switch {
		case c.Clear && c.Delta > 0:
			f.Better = append(f.Better, c)
		case c.Clear:
			f.Worse = append(f.Worse, c)
		case c.Likely && c.Delta > 0:
			f.ProbablyBetter = append(f.ProbablyBetter, c)
		case c.Likely:
			f.ProbablyWorse = append(f.ProbablyWorse, c)
		}
	}
	switch {
	case len(f.Better) > 0 && len(f.Worse)+len(f.ProbablyWorse) > 0:
		return TradeOff, f
	case len(f.Better) > 0:
		return Better, f
	}
	return KeepDefault, f
}

// writeBatching writes the batching section: served on and off, and ONNX
// Runtime in process by batch size.
func writeBatching(w io.Writer, t Tuning, raw *RawBatch) {
	fmt.Fprintln(w, "## Dynamic batching (PaddleOCR cls)")
	fmt.Fprintln(w)
	def, off := t["default"], t["nobatch"]
	if len(def) == 0 && len(off) == 0 && raw == nil {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "Served: `svc bench` with the defaults (batching on, `max_batch_size` 32, one session) and with `batching.enabled: false`, in the %s of the session settings below; medians, with the range of the rounds in brackets. ", times(max(rounds(def), rounds(off))))
	fmt.Fprintln(w, "With batching off the requests run concurrently on the one session (ONNX Runtime allows concurrent runs); with it on, one merged run at a time.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| batching | c=1 p50 | c=1 req/s | c=8 req/s | c=32 req/s | c=32 p50 |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, row := range []struct {
		name string
		reps []bench.Report
	}{{"on (default)", def}, {"off", off}} {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", row.name,
			fmtStat(summarize(row.reps, 1, p50), fmtLatency), fmtStat(summarize(row.reps, 1, throughput), fmtRPS),
			fmtStat(summarize(row.reps, 8, throughput), fmtRPS), fmtStat(summarize(row.reps, 32, throughput), fmtRPS),
			fmtStat(summarize(row.reps, 32, p50), fmtLatency))
	}
	fmt.Fprintln(w)
	if ratio, n := pairedRatio(t[sideOn], t[sideOff], 1, p50); n > 0 {
		fmt.Fprintf(w, "Side by side at concurrency 1 (`build/bench.sh` step 4b): two servers at once, the defaults and batching off, loaded in turn by %d pairs of short runs, the order alternating, so that both meet the same moments of the machine. p50 with batching on %s, off %s; on ÷ off, the median over the pairs: %.3f.\n\n",
			n, fmtStat(summarize(t[sideOn], 1, p50), fmtLatency), fmtStat(summarize(t[sideOff], 1, p50), fmtLatency), ratio)
	}
	if raw == nil || len(raw.Runs) == 0 {
		fmt.Fprintln(w, "ONNX Runtime in process: not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "ONNX Runtime in process (`rawbatch`: %s, input %s of shape %s with the first dimension set to the batch size; one session, default settings, concurrency 1, %s per run, batch sizes interleaved; no HTTP, no JSON):\n\n",
		raw.ModelFile, raw.Input, joinInts(raw.Shape), fmtSeconds(raw.DurationS))
	fmt.Fprintln(w, "| batch | runs/s | rows/s | rows/s vs batch 1 |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|")
	base := raw.Rows(1)
	for _, b := range raw.Batches() {
		rows := raw.Rows(b)
		vs := "-"
		if base.ok() && base.Median > 0 {
			vs = fmt.Sprintf("%+.0f %%", gain(rows.Median, base.Median)*100)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s |\n", b, fmtRPS(rows.Median/float64(b)), fmtStat(rows, fmtRPS), vs)
	}
	fmt.Fprintln(w)
}

// writeTuning writes the session tuning table and the defaults the numbers
// support.
func writeTuning(w io.Writer, t Tuning) {
	fmt.Fprintln(w, "## Session tuning (PaddleOCR cls, served)")
	fmt.Fprintln(w)
	def := t["default"]
	if len(def) == 0 {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "One setting changed at a time from the defaults; %s, each running every setting once in a different order, so the machine's other load hits them alike. The table gives medians, with the range of the rounds in brackets. ", times(rounds(def)))
	fmt.Fprintf(w, "\"vs defaults\" compares each setting with the defaults' run of the same round (the median over the rounds of the relative change, signed so that + is better: lower latency, higher throughput). A difference is called clear when it is at least %.0f %% and every round, at least %d of them, agrees on its direction, probable when all but one round do; otherwise it is within the noise of this shared 2-core machine.", clearDelta*100, clearMinRounds)
	if n, chance := chanceClear(t); n > 0 {
		fmt.Fprintf(w, " With %d comparisons in this table, about %.1f would come out clear by chance alone if nothing differed (every round agreeing, as a coin would), so a default should change only on a result that repeats across runs of `make bench`.", n, chance)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| setting | change | c=1 p50 | c=1 req/s | c=8 req/s | c=8 p50 | vs defaults |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|---|")
	for _, s := range Settings {
		reps := t[s.Name]
		if len(reps) == 0 {
			continue
		}
		vs := "—"
		if s.Name != "default" {
			var parts []string
			for _, c := range compare(reps, def) {
				parts = append(parts, c.String())
			}
			vs = strings.Join(parts, "; ")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", s.Label, s.Change,
			fmtStat(summarize(reps, 1, p50), fmtLatency), fmtStat(summarize(reps, 1, throughput), fmtRPS),
			fmtStat(summarize(reps, 8, throughput), fmtRPS), fmtStat(summarize(reps, 8, p50), fmtLatency), vs)
	}
	fmt.Fprintln(w)
	if n := tuningErrors(t); n > 0 {
		fmt.Fprintf(w, "The tuning runs had %d failed requests (see the JSON in `build/artifacts/bench/`).\n\n", n)
	}

	fmt.Fprintln(w, "**Defaults the numbers of this run support:**")
	fmt.Fprintln(w)
	for _, g := range []struct {
		setting, current string
		alts             []string
		note             string
	}{
		{"`runtime.intra_op_threads`", "0, half the cores per run (core.CPUPlan)", []string{"threads1", "threads2"}, threadsNote(def, t["threads1"])},
		{"`runtime.spinning`", "false", []string{"spinning"}, ""},
		{"`serve.workers`", "1", []string{"workers2"}, workersNote(t) + " Each worker also holds its own copy of the model and ONNX Runtime's arena: memory grows about linearly with workers (README.md, \"Workers\")."},
		{"`batching.enabled`", "true", []string{"nobatch"}, ""},
	} {
		fmt.Fprintf(w, "- %s, now %s: %s%s\n", g.setting, g.current, recommend(t, g.alts), g.note)
	}
	fmt.Fprintln(w)
}

// chanceClear counts the comparisons against the defaults and how many of
// them would be clear by chance (all rounds agreeing: 2 × 0.5^rounds each)
// if nothing differed; the size threshold makes that an upper bound.
func chanceClear(t Tuning) (n int, expected float64) {
	for _, s := range Settings {
		if s.Name == "default" {
			continue
		}
		for _, c := range compare(t[s.Name], t["default"]) {
			n++
			if c.Rounds >= clearMinRounds {
				expected += 2 * math.Pow(0.5, float64(c.Rounds))
			}
		}
	}
	return n, expected
}

// times says how often the runs were repeated.
func times(n int) string {
	if n == 1 {
		return "one round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// threadsNote points out that 1 thread is the default's own choice on a
// 2-core machine, so the two rows show the noise.
func threadsNote(def, threads1 []bench.Report) string {
	if rounds(threads1) == 0 {
		return ""
	}
	cpus := 0
	for _, r := range def {
		cpus = max(cpus, r.Machine.CPUs)
	}
	if cpus != 2 {
		return ""
	}
	return " On this 2-core machine the default already runs 1 thread per run with 2 runs in flight, exactly what the 1-thread row sets, so that row shows the run-to-run noise of this machine."
}

// workersNote compares 2 workers with 1 intra-op thread in one process,
// which is what each worker runs: what the second process adds.
func workersNote(t Tuning) string {
	cs := compare(t["workers2"], t["threads1"])
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return " Against 1 intra-op thread in one process (what each worker runs), 2 workers: " + strings.Join(parts, "; ") + "."
}

// recommend says what the numbers say about the alternatives to a default.
func recommend(t Tuning, alts []string) string {
	def := t["default"]
	var out []string
	for _, name := range alts {
		reps := t[name]
		if len(reps) == 0 || len(def) == 0 {
			continue
		}
		label := settingLabel(name)
		v, f := verdict(compare(reps, def))
		also := func(prefix string, cs []Comparison) string {
			if len(cs) == 0 {
				return ""
			}
			return prefix + joinComparisons(cs)
		}
		switch v {
		case Better:
			out = append(out, fmt.Sprintf("%s is clearly better (%s%s) and not worse on anything measured: this run supports changing the default",
				label, joinComparisons(f.Better), also("; probably also ", f.ProbablyBetter)))
		case TradeOff:
			worse := append(append([]Comparison{}, f.Worse...), f.ProbablyWorse...)
			out = append(out, fmt.Sprintf("%s trades %s for %s: this run supports keeping the default unless that trade is wanted", label, joinComparisons(worse), joinComparisons(f.Better)))
		default:
			switch {
			case len(f.Worse) > 0:
				out = append(out, fmt.Sprintf("%s is clearly worse (%s%s): keep the default", label, joinComparisons(f.Worse), also("; probably also ", f.ProbablyWorse)))
			case len(f.ProbablyBetter)+len(f.ProbablyWorse) > 0:
				out = append(out, fmt.Sprintf("%s shows no clear difference (%s): keep the default", label, strings.TrimPrefix(also("probably better: ", f.ProbablyBetter)+also("; probably worse: ", f.ProbablyWorse), "; ")))
			default:
				out = append(out, fmt.Sprintf("%s shows no clear difference: keep the default", label))
			}
		}
	}
	if len(out) == 0 {
		return "not measured."
	}
	return strings.Join(out, "; ") + "."
}

func settingLabel(name string) string {
	for _, s := range Settings {
		if s.Name == name {
			return s.Label
		}
	}
	return name
}

func joinComparisons(cs []Comparison) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %+.0f %%", c.Metric, c.Delta*100)
	}
	return strings.Join(parts, ", ")
}

func tuningErrors(t Tuning) int64 {
	var n int64
	for _, reps := range t {
		for _, r := range reps {
			n += errorsIn(r.Served)
		}
	}
	return n
}

func fmtStat(s Stat, f func(float64) string) string {
	if !s.ok() {
		return "-"
	}
	if s.N == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

func fmtLatency(us float64) string { return bench.FormatMicros(us) }

func fmtRPS(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + " s" }

func joinInts(s []int64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// readRawBatch reads rawbatch.json; nil when it is missing.
func readRawBatch(dir string) (*RawBatch, error) {
	var r RawBatch
	ok, err := readJSON(dir, fileRawBatch, &r)
	if err != nil || !ok {
		return nil, err
	}
	return &r, nil
}
