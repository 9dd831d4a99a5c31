package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// tuneOrder is build/bench.sh's order of the settings of its batching and
// session-tuning rounds (TUNE). A setting GROUP_NAME is compared with
// GROUP_default (the tiny model's), any other with "default" (PaddleOCR
// cls's).
var tuneOrder = []string{"default", "nobatch", "fixedbatch", "threads1", "threads2", "spinning", "workers2",
	"procscores", "procsplus1", "tiny_default", "tiny_procsplus1"}

// comparedWith is the setting s is compared with ("" for a baseline itself).
func comparedWith(s string) string {
	group, _, grouped := strings.Cut(s, "_")
	switch {
	case s == "default" || strings.HasSuffix(s, "_default"):
		return ""
	case grouped:
		return group + "_default"
	}
	return "default"
}

// tuning holds svc bench's reports of the tuning rounds by setting
// (tune-SETTING-rK.json) and of the side-by-side pairs by comparison and
// side (side-NAME-on-rK.json, side-NAME-off-rK.json); element k is round
// k+1, nil for a round without its file.
type tuning struct {
	settings []string
	rounds   map[string][]*Report
	// side holds each comparison's on and off runs, in sideOrder.
	side []sideBySide
}

// sideBySide is one comparison of build/bench.sh's step 4b.
type sideBySide struct {
	name    string
	on, off []*Report
}

// sideOrder and sideTitles are build/bench.sh's side-by-side comparisons,
// in table order, with what each compares.
var (
	sideOrder  = []string{"batching", "batchsize", "goprocs", "tinyprocs"}
	sideTitles = map[string]string{
		"batching":  "batching on ÷ off (cls)",
		"batchsize": "batch size controller ÷ merging up to max_batch_size (cls)",
		"goprocs":   "Go-processor controller ÷ one per core (cls, long runs)",
		"tinyprocs": "Go-processor controller ÷ one more than the cores (tiny model, short runs)",
	}
)

var (
	tuneFile = regexp.MustCompile(`^tune-([a-z0-9]+(?:_[a-z0-9]+)?)-r([0-9]+)\.json$`)
	sideFile = regexp.MustCompile(`^side-([a-z0-9]+)-(on|off)-r([0-9]+)\.json$`)
)

func loadTuning(a *artifacts, d *data) error {
	d.tuning = tuning{rounds: map[string][]*Report{}}
	// read files the pattern re matches into by key (the first
	// submatches, joined by "/") and round (the last).
	read := func(re *regexp.Regexp, into map[string][]*Report) error {
		for _, m := range a.match(re) {
			k, err := strconv.Atoi(m[len(m)-1])
			if err != nil || k < 1 || k > 1000 {
				continue
			}
			r, err := optional[Report](a, m[0])
			if err != nil {
				return err
			}
			key := strings.Join(m[1:len(m)-1], "/")
			for len(into[key]) < k {
				into[key] = append(into[key], nil)
			}
			into[key][k-1] = r
		}
		return nil
	}
	if err := read(tuneFile, d.tuning.rounds); err != nil {
		return err
	}
	side := map[string][]*Report{}
	if err := read(sideFile, side); err != nil {
		return err
	}
	var sides []string
	for k := range side {
		name, _, _ := strings.Cut(k, "/")
		sides = append(sides, name)
	}
	for _, name := range ordered(sides, sideOrder) {
		d.tuning.side = append(d.tuning.side, sideBySide{name: name, on: side[name+"/on"], off: side[name+"/off"]})
	}
	var names []string
	for n := range d.tuning.rounds {
		names = append(names, n)
	}
	d.tuning.settings = ordered(names, tuneOrder)
	var err error
	d.rawBatch, err = a.rawBench(fileRawBatch)
	return err
}

// metric is one measured figure of a served level.
type metric struct {
	c      int
	f      func(Level) float64
	format func(float64) string
	// higher is true when a higher value is better.
	higher bool
}

func (m metric) name() string {
	if m.higher {
		return fmt.Sprintf("c=%d req/s", m.c)
	}
	return fmt.Sprintf("c=%d p50", m.c)
}

var (
	p50At1  = metric{1, func(l Level) float64 { return l.LatencyUS.P50 }, us, false}
	rpsAt1  = metric{1, func(l Level) float64 { return l.ThroughputRPS }, rps, true}
	rpsAt8  = metric{8, func(l Level) float64 { return l.ThroughputRPS }, rps, true}
	p50At8  = metric{8, func(l Level) float64 { return l.LatencyUS.P50 }, us, false}
	rpsAt32 = metric{32, func(l Level) float64 { return l.ThroughputRPS }, rps, true}
	p50At32 = metric{32, func(l Level) float64 { return l.LatencyUS.P50 }, us, false}
	// compared are the metrics each setting is compared with the defaults on.
	compared = []metric{p50At1, rpsAt8, rpsAt32}
)

// summarize takes m over the rounds that answered at its level.
func summarize(reps []*Report, m metric) stat {
	var vals []float64
	for _, r := range reps {
		if r == nil {
			continue
		}
		if l := level(r.Served, m.c); l.ok() {
			vals = append(vals, m.f(*l))
		}
	}
	return statOf(vals)
}

// paired is alt's m ÷ def's m round by round (the two ran within a minute
// of each other, so the machine's drifting load cancels out), for the
// rounds where both answered.
func paired(alt, def []*Report, m metric) []float64 {
	var rs []float64
	for k := 0; k < len(alt) && k < len(def); k++ {
		if alt[k] == nil || def[k] == nil {
			continue
		}
		a, b := level(alt[k].Served, m.c), level(def[k].Served, m.c)
		if a.ok() && b.ok() && m.f(*b) > 0 {
			rs = append(rs, m.f(*a)/m.f(*b))
		}
	}
	return rs
}

// versus writes alt against def on m: the median over the rounds of the
// relative change, signed so that + is better, and in how many rounds
// alt did better.
func versus(alt, def []*Report, m metric) string {
	rs := paired(alt, def, m)
	if len(rs) == 0 {
		return ""
	}
	sign, better := 1.0, 0
	if !m.higher {
		sign = -1
	}
	for _, r := range rs {
		if sign*(r-1) > 0 {
			better++
		}
	}
	return fmt.Sprintf("%s (%d of %d)", change(sign*(median(rs)-1)), better, len(rs))
}

func rounds(reps []*Report) int {
	n := 0
	for _, r := range reps {
		if r != nil {
			n++
		}
	}
	return n
}

func writeTuning(w *doc, d *data) {
	shown := []metric{p50At1, rpsAt1, rpsAt8, p50At8, rpsAt32, p50At32}
	head := []string{"setting", "rounds"}
	for _, m := range shown {
		head = append(head, m.name())
	}
	for _, m := range compared {
		head = append(head, "vs its defaults: "+m.name())
	}
	t := newTable(1, head...)
	for _, s := range d.tuning.settings {
		reps := d.tuning.rounds[s]
		cells := []string{s, strconv.Itoa(rounds(reps))}
		for _, m := range shown {
			cells = append(cells, summarize(reps, m).format(m.format))
		}
		base := comparedWith(s)
		for _, m := range compared {
			if base == "" {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, versus(reps, d.tuning.rounds[base], m))
		}
		t.row(cells...)
	}
	w.section("Batching, session settings and the self-tuning controllers: PaddleOCR cls (tiny_*: the tiny model) served, in interleaved rounds (build/bench.sh)", t)
}

func writeSide(w *doc, d *data) {
	ratio := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	t := newTable(1, "comparison", "concurrency", "pairs", "on: p50", "off: p50", "on: req/s", "off: req/s",
		"on ÷ off: p50", "on ÷ off: req/s", "on better: p50", "on better: req/s")
	for _, sd := range d.tuning.side {
		c := sideConcurrency(sd.on)
		if c == 0 {
			continue
		}
		p50 := metric{c, func(l Level) float64 { return l.LatencyUS.P50 }, us, false}
		tput := metric{c, func(l Level) float64 { return l.ThroughputRPS }, rps, true}
		t.row(title(sideTitles, sd.name), strconv.Itoa(c), strconv.Itoa(min(rounds(sd.on), rounds(sd.off))),
			summarize(sd.on, p50).format(us), summarize(sd.off, p50).format(us),
			summarize(sd.on, tput).format(rps), summarize(sd.off, tput).format(rps),
			statOf(paired(sd.on, sd.off, p50)).format(ratio), statOf(paired(sd.on, sd.off, tput)).format(ratio),
			betterIn(sd.on, sd.off, p50), betterIn(sd.on, sd.off, tput))
	}
	w.section("Side by side: two servers at once, a setting on and off, in alternating pairs (build/bench.sh)", t)
}

// sideConcurrency is the level the runs of a comparison measured (0: none).
func sideConcurrency(reps []*Report) int {
	for _, r := range reps {
		if r != nil && len(r.Served) > 0 {
			return r.Served[0].Concurrency
		}
	}
	return 0
}

// betterIn says in how many of the pairs on did better on m than off.
func betterIn(on, off []*Report, m metric) string {
	rs := paired(on, off, m)
	if len(rs) == 0 {
		return ""
	}
	better := 0
	for _, r := range rs {
		if (m.higher && r > 1) || (!m.higher && r < 1) {
			better++
		}
	}
	return fmt.Sprintf("%d of %d", better, len(rs))
}

// rowsAt are rows/s at batch b on the one session, by repetition.
func (r *RawBench) rowsAt(b int64) map[int]float64 {
	out := map[int]float64{}
	for _, run := range r.Runs {
		if run.Batch == b && run.Sessions == 0 {
			out[run.Rep] = run.RowsPerS
		}
	}
	return out
}

func writeRawBatch(w *doc, d *data) {
	r := d.rawBatch
	if r == nil {
		return
	}
	var batches []int64
	for _, run := range r.Runs {
		if run.Sessions == 0 && !slices.Contains(batches, run.Batch) {
			batches = append(batches, run.Batch)
		}
	}
	slices.Sort(batches)
	t := newTable(0, "batch", "runs/s", "rows/s", "rows/s ÷ batch 1, paired by repetition")
	base := r.rowsAt(1)
	for _, b := range batches {
		rows := r.rowsAt(b)
		var vals, rel []float64
		for rep, v := range rows {
			vals = append(vals, v)
			if x, ok := base[rep]; ok && x > 0 {
				rel = append(rel, v/x)
			}
		}
		s := statOf(vals)
		t.row(strconv.FormatInt(b, 10), rps(s.median/float64(b)), s.format(rps), statOf(rel).format(func(v float64) string { return fmt.Sprintf("%.2f", v) }))
	}
	w.section("ONNX Runtime in process by batch size: PaddleOCR cls, one session (build/bench.sh, BenchmarkRaw)", t)
}
