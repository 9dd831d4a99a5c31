package main

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// tailOrder is build/bench-tail.sh's order of its variants (TAIL_VARIANTS).
var tailOrder = []string{"default", "log-off", "nobatch", "gomaxprocs1", "gogc400", "pinned", "pinned-nogc"}

// The server's metrics that build/bench-tail.sh scrapes after each run.
const (
	metricDuration = "svc_inference_request_duration_seconds"
	metricGCs      = "go_gc_duration_seconds_count"
)

// tailRun is one variant of build/bench-tail.sh: wrk's summary
// (tail-VARIANT.json) with the CPU both sides used, the server threads'
// scheduling, and the server's metrics after the run.
type tailRun struct {
	key   string
	wrk   Wrk
	cpu   *LoadCPU
	sched *Sched
	hist  *histogram // nil: not scraped
	gcs   int64      // -1: not scraped
}

var tailFile = regexp.MustCompile(`^tail-([a-z0-9-]+)\.json$`)

func loadTail(a *artifacts, d *data) error {
	var runs keyed[tailRun]
	for _, m := range a.match(tailFile) {
		r := tailRun{key: m[1], gcs: -1}
		if _, err := a.json(m[0], &r.wrk); err != nil {
			return err
		}
		if r.wrk.DurationUS <= 0 {
			continue // not a wrk summary
		}
		var err error
		if r.cpu, err = optional[LoadCPU](a, "tail-"+r.key+".cpu.json"); err != nil {
			return err
		}
		if r.sched, err = optional[Sched](a, "tail-"+r.key+".sched.json"); err != nil {
			return err
		}
		if text := a.text("tail-" + r.key + ".metrics.txt"); text != "" {
			r.hist, r.gcs = parseHistogram(text, metricDuration, `status="success"`), parseCount(text, metricGCs)
		}
		runs.at(r.key, func() tailRun { return r })
	}
	d.tail = runs.in(tailOrder)
	return nil
}

// histogram is a Prometheus histogram: bucket bounds in seconds, ascending
// with +Inf last, and the observations at or under each.
type histogram struct {
	le, cum []float64
}

// parseHistogram reads the buckets of histogram name whose labels contain
// label from a Prometheus text exposition; nil when there are none.
func parseHistogram(text, name, label string) *histogram {
	h := &histogram{}
	type bucket struct{ le, cum float64 }
	var bs []bucket
	for _, line := range strings.Split(text, "\n") {
		labels, value, ok := sample(line, name+"_bucket")
		if !ok || !strings.Contains(labels, label) {
			continue
		}
		_, le, ok := strings.Cut(labels, `le="`)
		if !ok {
			continue
		}
		le, _, _ = strings.Cut(le, `"`)
		bound, err := strconv.ParseFloat(le, 64) // "+Inf" parses
		if err != nil {
			continue
		}
		bs = append(bs, bucket{bound, value})
	}
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].le, 1) {
		return nil
	}
	slices.SortFunc(bs, func(x, y bucket) int { return cmpFloat(x.le, y.le) })
	for _, b := range bs {
		h.le, h.cum = append(h.le, b.le), append(h.cum, b.cum)
	}
	return h
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// parseCount reads the value of the sample name (any labels); -1 when it
// is not there.
func parseCount(text, name string) int64 {
	for _, line := range strings.Split(text, "\n") {
		if _, v, ok := sample(line, name); ok {
			return int64(v)
		}
	}
	return -1
}

// sample splits a line of a text exposition that is a sample of name into
// its labels ("" without) and value.
func sample(line, name string) (labels string, value float64, ok bool) {
	rest, ok := strings.CutPrefix(line, name)
	if !ok || rest == "" {
		return "", 0, false
	}
	if rest[0] == '{' {
		i := strings.LastIndexByte(rest, '}')
		if i < 0 {
			return "", 0, false
		}
		labels, rest = rest[1:i], rest[i+1:]
	} else if rest[0] != ' ' {
		return "", 0, false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return labels, v, err == nil
}

func (h *histogram) total() float64 { return h.cum[len(h.cum)-1] }

// bound is the smallest bucket bound at or under which at least the share
// q of the observations fall.
func (h *histogram) bound(q float64) float64 {
	for i, c := range h.cum {
		if c >= q*h.total() {
			return h.le[i]
		}
	}
	return math.Inf(1)
}

// over is the share of the observations above bound le; NaN when le is
// not a bucket bound or nothing was observed.
func (h *histogram) over(le float64) float64 {
	i := slices.Index(h.le, le)
	if i < 0 || h.total() <= 0 {
		return math.NaN()
	}
	return 1 - h.cum[i]/h.total()
}

func writeTail(w *doc, d *data) {
	t := newTable(1, "variant", "req/s", "p50", "p90", "p99", "p99 ÷ p50", "max",
		"one by one: p50", "p99", "p99 ÷ p50", "server CPU", "wrk CPU", "failed",
		"in the server: p99 ≤", "over 1 ms", "waiting for a core, per request", "time slices per request", "garbage collections")
	for _, r := range d.tail {
		l := r.wrk.LatencyUS
		cells := []string{r.key, rps(r.wrk.RPS()), us(l.P50), us(l.P90), us(l.P99), times(l.P99, l.P50), us(l.Max)}
		if x := r.wrk.MeasuredUS; x != nil {
			cells = append(cells, us(x.P50), us(x.P99), times(x.P99, x.P50))
		} else {
			cells = append(cells, "", "", "")
		}
		if c := r.cpu; c != nil {
			cells = append(cells, cpuShare(c.ServerCPUS, c.WallS), cpuShare(c.ClientCPUS, c.WallS))
		} else {
			cells = append(cells, "", "")
		}
		cells = append(cells, strconv.FormatInt(r.wrk.Failed(), 10))
		if h := r.hist; h != nil {
			cells = append(cells, bound(h.bound(0.99)), pct(h.over(0.001)))
		} else {
			cells = append(cells, "", "")
		}
		if s := r.sched; s != nil && r.wrk.Requests > 0 {
			n := float64(r.wrk.Requests)
			cells = append(cells, us(1e6*s.WaitS/n), fmt.Sprintf("%.2f", float64(s.Slices)/n))
		} else {
			cells = append(cells, "", "")
		}
		if r.gcs >= 0 {
			cells = append(cells, strconv.FormatInt(r.gcs, 10))
		}
		t.row(cells...)
	}
	w.section("Tail latency: the tiny model under wrk, one change per variant (build/bench-tail.sh)", t)
}

// times writes a ÷ b with one decimal; "" when b is 0.
func times(a, b float64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", a/b)
}

// bound writes a bucket bound in seconds as a latency.
func bound(le float64) string {
	if math.IsInf(le, 1) {
		return "∞"
	}
	return us(le * 1e6)
}
