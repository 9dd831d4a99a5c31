package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// The variants of build/bench-tail.sh, in its order: tail-KEY.json (wrk's
// summary), tail-KEY.cpu.json and tail-KEY.metrics.txt (the server's
// request-duration histogram).
var tailVariants = []struct{ key, title, change string }{
	{"default", "defaults", "nothing"},
	{"log-off", "access log off", "`--access-log off`"},
	{"nobatch", "batching off", "`-c` with `batching.enabled: false`"},
	{"gomaxprocs1", "GOMAXPROCS=1", "`GOMAXPROCS=1` in the server's environment"},
	{"gogc400", "GOGC=400", "`GOGC=400` in the server's environment"},
	{"pinned", "pinned", "server on CPU 0, wrk on CPU 1 (`taskset`)"},
	{"pinned-nogc", "pinned, GC off", "pinned, and `GOGC=off` in the server's environment"},
}

// TailRun is one variant's wrk run.
type TailRun struct {
	Key, Title, Change string
	Wrk                Wrk
	CPU                *LoadCPU
	// Server is the server's histogram of its requests' durations after
	// the run (nil when not scraped).
	Server *ServerHist
	// Sched is how the scheduler ran the server's threads during the run
	// (nil when not recorded).
	Sched *TailSched
	// GCs is how many garbage collections the server ran from its start
	// to the end of the run (-1 when not scraped).
	GCs int64
}

// TailSched is the change over a run in the sums of the server's threads'
// /proc/PID/task/TID/schedstat: time on a CPU, time runnable and waiting
// for one, and time slices; Threads is how many there were at the end.
type TailSched struct {
	RunS    float64 `json:"run_s"`
	WaitS   float64 `json:"wait_s"`
	Slices  int64   `json:"slices"`
	Threads int     `json:"threads"`
}

// perRequest is the wait for a core per request, in µs, and the time
// slices per request.
func (s *TailSched) perRequest(requests int64) (waitUS, slices float64) {
	if s == nil || requests <= 0 {
		return 0, 0
	}
	return 1e6 * s.WaitS / float64(requests), float64(s.Slices) / float64(requests)
}

// waited says how long the threads waited for a core over a run of
// requests requests, as the report's sentences put it.
func (s *TailSched) waited(requests int64) string {
	wait, slices := s.perRequest(requests)
	return fmt.Sprintf("%.2f s runnable but waiting for a core (%s per request, in %.2f time slices per request)", s.WaitS, bench.FormatMicros(wait), slices)
}

// inServer says what the server's histogram saw of the run's requests
// (whose: "its", "the defaults'"), beside wrk's p99; call it only with a
// histogram.
func (r *TailRun) inServer(whose string) string {
	h := r.Server
	return fmt.Sprintf("99 %% of %s %.0f requests at or under %s and %.2f %% over 1 ms, against wrk's p99 of %s",
		whose, h.Total(), fmtBound(h.Bound(0.99)), 100*h.Over(0.001), bench.FormatMicros(r.Wrk.LatencyUS.P99))
}

// uncorrected gives the run's latencies timed one by one, without wrk's
// correction; call it only when they were measured.
func (r *TailRun) uncorrected() string {
	x := r.Wrk.MeasuredUS
	return fmt.Sprintf("p50 %s and p99 %s (p99 ÷ p50 %.1f)", bench.FormatMicros(x.P50), bench.FormatMicros(x.P99), tailOf(x.P50, x.P99))
}

// ServerHist is the server's svc_inference_request_duration_seconds
// histogram of successful requests: how long each took from reading the
// request to writing its answer. LE are the buckets' upper bounds in
// seconds (ascending, +Inf last), Cum the requests at or under each.
type ServerHist struct {
	LE, Cum []float64
}

// parseTailMetrics reads what bench-tail.sh scraped from a server: the
// histogram of its successful requests (nil without it) and its garbage
// collections (-1 without them). Neither is there when the text does not
// parse as a Prometheus text exposition (its # TYPE lines included).
func parseTailMetrics(text string) (*ServerHist, int64) {
	fams := parseMetrics(text)
	return serverHist(fams["svc_inference_request_duration_seconds"]), gcCount(fams["go_gc_duration_seconds"])
}

// parseMetrics reads a Prometheus text exposition; nil when it does not
// parse.
func parseMetrics(text string) map[string]*dto.MetricFamily {
	// The format ends every line with a newline; readText trims the last.
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil
	}
	return fams
}

// gcCount is the count of Go's go_gc_duration_seconds summary: the garbage
// collections the process ran; -1 without it.
func gcCount(fam *dto.MetricFamily) int64 {
	if fam == nil || fam.GetType() != dto.MetricType_SUMMARY || len(fam.GetMetric()) == 0 {
		return -1
	}
	return int64(fam.GetMetric()[0].GetSummary().GetSampleCount())
}

// serverHist is the histogram of successful requests in fam; nil when fam
// is not that histogram.
func serverHist(fam *dto.MetricFamily) *ServerHist {
	if fam == nil || fam.GetType() != dto.MetricType_HISTOGRAM {
		return nil
	}
	for _, m := range fam.GetMetric() {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == "status" && l.GetValue() == "success" }) {
			continue
		}
		h := &ServerHist{}
		for _, b := range m.GetHistogram().GetBucket() {
			h.LE = append(h.LE, b.GetUpperBound())
			h.Cum = append(h.Cum, float64(b.GetCumulativeCount()))
		}
		if len(h.LE) == 0 || !math.IsInf(h.LE[len(h.LE)-1], 1) {
			h.LE = append(h.LE, math.Inf(1))
			h.Cum = append(h.Cum, float64(m.GetHistogram().GetSampleCount()))
		}
		return h
	}
	return nil
}

// Total is the number of requests counted.
func (h *ServerHist) Total() float64 { return h.Cum[len(h.Cum)-1] }

// Bound is the smallest bucket bound at or under which at least the
// share q of the requests fall (+Inf when only the last bucket holds
// them).
func (h *ServerHist) Bound(q float64) float64 {
	for i, c := range h.Cum {
		if c >= q*h.Total() {
			return h.LE[i]
		}
	}
	return math.Inf(1)
}

// Over is the share of the requests that took longer than the bucket
// bound le (which must be one of LE).
func (h *ServerHist) Over(le float64) float64 {
	if h.Total() <= 0 {
		return 0
	}
	for i, b := range h.LE {
		if b == le {
			return 1 - h.Cum[i]/h.Total()
		}
	}
	return math.NaN()
}

// fmtBound writes a bucket bound in seconds as a duration.
func fmtBound(le float64) string {
	if math.IsInf(le, 1) {
		return "∞"
	}
	return bench.FormatMicros(le * 1e6)
}

// Tail holds the variants that ran, in tailVariants order.
type Tail []TailRun

// readTail reads what build/bench-tail.sh wrote.
func readTail(dir string) (Tail, error) {
	var out Tail
	for _, v := range tailVariants {
		r := TailRun{Key: v.key, Title: v.title, Change: v.change, GCs: -1}
		ok, err := readJSON(dir, "tail-"+v.key+".json", &r.Wrk)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if r.CPU, err = readOptional[LoadCPU](dir, "tail-"+v.key+".cpu.json"); err != nil {
			return nil, err
		}
		if r.Sched, err = readOptional[TailSched](dir, "tail-"+v.key+".sched.json"); err != nil {
			return nil, err
		}
		if text := readText(dir, "tail-"+v.key+".metrics.txt"); text != "" {
			r.Server, r.GCs = parseTailMetrics(text)
		}
		out = append(out, r)
	}
	return out, nil
}

func (t Tail) run(key string) *TailRun {
	for i := range t {
		if t[i].Key == key {
			return &t[i]
		}
	}
	return nil
}

// tailCutThreshold is the p99 change below which a variant is said to make
// no difference (single short runs on a shared machine).
const tailCutThreshold = 0.10

// TailSummary is the generated sentence: which variants cut p99 the most
// against the defaults, and which raised it.
func TailSummary(t Tail) string {
	def := t.run("default")
	if def == nil || def.Wrk.LatencyUS.P99 <= 0 {
		return "The defaults' run is missing: no comparison."
	}
	type change struct {
		title string
		rel   float64
	}
	var cuts, rises []change
	for _, r := range t {
		if r.Key == "default" || r.Wrk.LatencyUS.P99 <= 0 {
			continue
		}
		rel := r.Wrk.LatencyUS.P99/def.Wrk.LatencyUS.P99 - 1
		switch {
		case rel <= -tailCutThreshold:
			cuts = append(cuts, change{r.Title, rel})
		case rel >= tailCutThreshold:
			rises = append(rises, change{r.Title, rel})
		}
	}
	sort.SliceStable(cuts, func(i, j int) bool { return cuts[i].rel < cuts[j].rel })
	sort.SliceStable(rises, func(i, j int) bool { return rises[i].rel > rises[j].rel })
	list := func(cs []change) string {
		var s []string
		for _, c := range cs {
			s = append(s, fmt.Sprintf("%s (%+.0f %%)", c.title, 100*c.rel))
		}
		return strings.Join(s, ", ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Against the defaults' p99 of %s, ", bench.FormatMicros(def.Wrk.LatencyUS.P99))
	if len(cuts) == 0 {
		fmt.Fprintf(&b, "no variant cut p99 by %.0f %% or more", 100*tailCutThreshold)
	} else {
		fmt.Fprintf(&b, "the variants that cut p99 the most: %s", list(cuts))
	}
	if len(rises) > 0 {
		fmt.Fprintf(&b, "; raised it: %s", list(rises))
	}
	fmt.Fprintf(&b, ". Changes under %.0f %% are within what separate short runs on a shared machine vary by.", 100*tailCutThreshold)
	return b.String()
}

// writeTail renders the tail-latency experiment.
func writeTail(w io.Writer, t Tail) {
	fmt.Fprintf(w, "## Tail latency (tiny model, concurrency %d)\n\n", tailLevel)
	if len(t) == 0 {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "`build/bench-tail.sh`: `svc serve testdata/models/classifier.onnx`, a fresh server per variant, loaded by wrk at concurrency %d (`build/bench-wrk.lua`, the same bodies as above) for one short run each; every variant changes one thing from the defaults. CPU is CPU time over wall time, 100 %% = one core.\n\n", tailLevel)
	fmt.Fprintln(w, "Two sets of latencies: wrk's own, which include its correction for coordinated omission (when the run ends, each request slower than the mean interval between requests on a connection adds made-up samples, one per interval it overran: the latencies a client sending at a fixed rate would have seen), and the script's timing of each request as it happened (`WRK_LATENCY=1`: from wrk asking for the request to its answer, matched by X-Request-ID, uncorrected). By Little's law the second set's mean × throughput is about the 4 requests in flight; the first set's is not.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The last columns are the server's own view, from its histogram of request durations (`svc_inference_request_duration_seconds`, scraped after the run): how long 99 % of the requests took at most from the server reading the request to writing its answer, to the histogram's bucket bound, and the share that took over 1 ms.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The scheduler's view of the server's threads over the run (the sums over its threads of `/proc/PID/task/TID/schedstat`, read before and after): the time they spent runnable but waiting for a core, per request, and the time slices they ran in, per request. A thread that waits for a core while it holds a Go processor holds up every request queued on it. The last column is how many garbage collections Go ran in the server from its start to the end of the run (`go_gc_duration_seconds_count`).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| variant | what changed | throughput | p50 | p90 | p99 | p99 ÷ p50 | max | per request: p50 | p90 | p99 | p99 ÷ p50 | mean × throughput | server CPU | wrk CPU | failed | in the server: p99 ≤ | over 1 ms | server threads waiting for a core, per request | time slices per request | garbage collections |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range t {
		sc, cc := "", ""
		if r.CPU != nil {
			sc, cc = r.CPU.percent(r.CPU.ServerCPUS), r.CPU.percent(r.CPU.ClientCPUS)
		}
		l := r.Wrk.LatencyUS
		m := " | | | | "
		if x := r.Wrk.MeasuredUS; x != nil {
			m = fmt.Sprintf("%s | %s | %s | %.1f | %.1f", bench.FormatMicros(x.P50), bench.FormatMicros(x.P90), bench.FormatMicros(x.P99),
				tailOf(x.P50, x.P99), x.Mean*r.Wrk.RPS()/1e6)
		}
		sp99, sover := "", ""
		if h := r.Server; h != nil {
			sp99, sover = fmtBound(h.Bound(0.99)), fmt.Sprintf("%.2f %%", 100*h.Over(0.001))
		}
		swait, sslices := "", ""
		if x := r.Sched; x != nil && r.Wrk.Requests > 0 {
			wait, slices := x.perRequest(r.Wrk.Requests)
			swait, sslices = bench.FormatMicros(wait), fmt.Sprintf("%.2f", slices)
		}
		gcs := ""
		if r.GCs >= 0 {
			gcs = fmt.Sprint(r.GCs)
		}
		fmt.Fprintf(w, "| %s | %s | %s/s | %s | %s | %s | %.1f | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Title, r.Change, fmtRPS(r.Wrk.RPS()),
			bench.FormatMicros(l.P50), bench.FormatMicros(l.P90), bench.FormatMicros(l.P99), tailOf(l.P50, l.P99), bench.FormatMicros(l.Max), m, sc, cc, r.Wrk.Failed(), sp99, sover, swait, sslices, gcs)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, TailSummary(t))
	fmt.Fprintln(w)
}

// whyTail points a missed tail target at the experiment.
func whyTail(w io.Writer, d Data) {
	fmt.Fprintf(w, "At concurrency %d on 2 cores, the server's goroutines, ONNX Runtime's threads and wrk's threads contend for the cores; a request whose turn comes after a descheduling waits a scheduler time slice, not a model run. ", tailLevel)
	if len(d.Tail) == 0 {
		fmt.Fprintln(w, "The tail experiment did not run.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "The experiment under Tail latency below changes one thing at a time. %s", TailSummary(d.Tail))
	def, own := d.Tail.run("default"), d.Tail.run("pinned")
	if def != nil && def.Wrk.MeasuredUS != nil {
		fmt.Fprintf(w, " wrk's percentiles include its correction for coordinated omission, which adds made-up samples behind every slow request; timed one by one without it, the defaults' requests had %s: a smaller tail, but a real one.", def.uncorrected())
	}
	if def != nil && def.Server != nil && def.Server.Total() > 0 {
		fmt.Fprintf(w, " The tail is not in the server's handling of the requests: its own histogram of request durations (from reading a request to writing its answer) puts %s. The rest of a slow request's time passes between the two processes: in the kernel's loopback and in threads, the server's and wrk's, waiting for a core to run on.", def.inServer("the defaults'"))
	}
	if def != nil && own != nil && def.Sched != nil && own.Sched != nil {
		fmt.Fprintf(w, " The scheduler's counts show where: over the defaults' run the server's %d threads spent %s, against %s with the server on a core of its own and wrk on the other, where p99 ÷ p50 was %.1f (p99 %s, %s/s).",
			def.Sched.Threads, def.Sched.waited(def.Wrk.Requests), own.Sched.waited(own.Wrk.Requests),
			tailOf(own.Wrk.LatencyUS.P50, own.Wrk.LatencyUS.P99), bench.FormatMicros(own.Wrk.LatencyUS.P99), fmtRPS(own.Wrk.RPS()))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// whyTailOwnCore explains a missed tail on a core of its own from what the
// scheduler and the server saw of that run.
func whyTailOwnCore(w io.Writer, t Tail) {
	r := t.run("pinned")
	if r == nil {
		fmt.Fprintln(w, "The run with the server on a core of its own did not happen.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "With the server alone on CPU 0 and wrk on CPU 1, the two no longer take turns on the same cores.")
	if x := r.Sched; x != nil {
		fmt.Fprintf(w, " The server's %d threads spent %s.", x.Threads, x.waited(r.Wrk.Requests))
	}
	if h := r.Server; h != nil && h.Total() > 0 {
		fmt.Fprintf(w, " The server's own histogram puts %s.", r.inServer("its"))
	}
	if r.Wrk.MeasuredUS != nil {
		fmt.Fprintf(w, " Timed one by one without wrk's correction for coordinated omission: %s.", r.uncorrected())
	}
	if r.GCs > 0 {
		fmt.Fprintf(w, " Go collected its garbage %d times from the server's start to the end of the run (%.0f requests a collection), each time on the one core the requests have.", r.GCs, float64(r.Wrk.Requests)/float64(r.GCs))
	}
	if off := t.run("pinned-nogc"); off != nil && off.Wrk.LatencyUS.P50 > 0 && r.Wrk.LatencyUS.P99 > 0 {
		l := off.Wrk.LatencyUS
		fmt.Fprintf(w, " The same with the collector off (`GOGC=off`): p99 ÷ p50 %.1f (p50 %s, p99 %s, %s/s)", tailOf(l.P50, l.P99), bench.FormatMicros(l.P50), bench.FormatMicros(l.P99), fmtRPS(off.Wrk.RPS()))
		if off.Wrk.MeasuredUS != nil {
			fmt.Fprintf(w, "; timed one by one %s", off.uncorrected())
		}
		switch rel := 1 - l.P99/r.Wrk.LatencyUS.P99; {
		case rel >= tailCutThreshold:
			fmt.Fprintf(w, ": without the collections p99 is %.0f %% lower, the share of the tail on a core of its own that they make.", 100*rel)
		case rel <= -tailCutThreshold:
			fmt.Fprintf(w, ": p99 %.0f %% higher without the collections (a heap that only grows), so they are not where the tail on a core of its own comes from.", -100*rel)
		default:
			fmt.Fprintf(w, ": p99 within %.0f %% of the run with the collector on, so the collections are not where the tail on a core of its own comes from.", 100*tailCutThreshold)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// TailOwnCoreTarget checks the tiny model's p99 ÷ p50 at concurrency 4 with
// the server on a core of its own and wrk on the other (bench-tail.sh's
// pinned variant): the server's tail without the load generator's threads
// competing for its core.
func TailOwnCoreTarget(t Tail) Target {
	out := Target{Key: "tail-own-core", Goal: fmt.Sprintf("tiny model, concurrency %d, the server on a core of its own and wrk on the other (`taskset`): p99 ≤ %.0f × p50 (wrk)", tailLevel, tailMaxRatio), Measured: "not measured"}
	r := t.run("pinned")
	if r == nil || r.Wrk.LatencyUS.P50 <= 0 {
		return out
	}
	l := r.Wrk.LatencyUS
	x := tailOf(l.P50, l.P99)
	out.Measured = fmt.Sprintf("wrk %.1f (p50 %s, p99 %s, %s/s)", x, bench.FormatMicros(l.P50), bench.FormatMicros(l.P99), fmtRPS(r.Wrk.RPS()))
	if def := t.run("default"); def != nil && def.Wrk.RPS() > 0 {
		out.Measured += fmt.Sprintf("; the defaults sharing both cores with wrk: %s/s", fmtRPS(def.Wrk.RPS()))
	}
	out.Met = met(x <= tailMaxRatio && r.Wrk.Failed() == 0)
	if x > tailMaxRatio {
		out.Miss = fmt.Sprintf("%.1f: p99 %s against the %s (%.0f × p50) allowed", x-tailMaxRatio, bench.FormatMicros(l.P99), bench.FormatMicros(tailMaxRatio*l.P50), tailMaxRatio)
	}
	return out
}
