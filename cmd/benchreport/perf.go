package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// The performance targets: served ÷ the raw baseline of
// build/bench-served.sh at concurrency 16 (v1 JSON from bench-served.sh,
// v2 binary tensors from bench-protocols.sh), the validation share of the
// server's CPU on det, the access log's cost at the tiny model's
// saturation, and the tiny model's tail at concurrency 4.
const (
	ratioLevel       = 16
	clsV1MinRatio    = 0.6
	detV1MinRatio    = 0.9
	binaryMinBase    = 0.85
	validateMaxShare = 0.05
	logMaxShare      = 0.02
	tailLevel        = 4
	tailMaxRatio     = 5.0
)

// The profiled runs these targets read (build/bench.sh, profile_run).
const (
	profCls16    = "cls-c16"
	profDet16    = "det-c16"
	profClsBin16 = "cls-c16-bin"
	profDetBin16 = "det-c16-bin"
	profLogOn    = "tiny-c16-log"
	profLogOff   = "tiny-c16-nolog"
)

// The access log's functions: the line, written in the handler's
// goroutine, and the goroutine that writes the lines out.
const (
	fnAccessLine = "github.com/svc-dev/svc/transport.accessLogger.write"
	fnLogWriter  = "github.com/svc-dev/svc/transport.(*LogWriter).run"
)

// ratioTargets lists the served ÷ baseline targets: key, model, protocol,
// threshold and the profile that explains a miss.
var ratioTargets = []struct {
	key, model string
	proto      bench.Protocol
	min        float64
	prof       string
}{
	{"base-cls-v1", "cls", bench.ProtocolV1, clsV1MinRatio, profCls16},
	{"base-det-v1", "det", bench.ProtocolV1, detV1MinRatio, profDet16},
	{"base-cls-bin", "cls", bench.ProtocolV2Binary, binaryMinBase, profClsBin16},
	{"base-det-bin", "det", bench.ProtocolV2Binary, binaryMinBase, profDetBin16},
}

// ClientRatio is one load generator's throughput at one level, and its
// ratio to the raw baseline.
type ClientRatio struct {
	Client string
	RPS    float64
	Ratio  float64
	Errors int64
}

// servedModel returns the model's served runs, nil when there are none.
func servedModel(s Served, key string) *ServedModel {
	for i := range s {
		if s[i].Key == key {
			return &s[i]
		}
	}
	return nil
}

// baselineOf is the model's raw baseline in items/s (0: not measured).
func baselineOf(s Served, key string) float64 {
	m := servedModel(s, key)
	if m == nil {
		return 0
	}
	if _, best := Baseline(m.Raw); best != nil {
		return best.Items.Max
	}
	return 0
}

// ratiosAt gives each load generator's throughput at concurrency c as a
// ratio to the raw baseline: svc bench and wrk on v1 (bench-served.sh),
// svc bench alone on v2 binary tensors (bench-protocols.sh).
func ratiosAt(d Data, model string, proto bench.Protocol, c int) []ClientRatio {
	base := baselineOf(d.Served, model)
	if base <= 0 {
		return nil
	}
	var out []ClientRatio
	if proto == bench.ProtocolV1 {
		m := servedModel(d.Served, model)
		for _, l := range m.Levels {
			if l.Concurrency != c {
				continue
			}
			if bl := l.benchLevel(); bl != nil {
				out = append(out, ClientRatio{"svc bench", bl.ThroughputRPS, bl.ThroughputRPS / base, bl.Errors})
			}
			if l.Wrk != nil {
				out = append(out, ClientRatio{"wrk", l.Wrk.RPS(), l.Wrk.RPS() / base, l.Wrk.Failed()})
			}
		}
		return out
	}
	if r := d.Protocols[model][proto]; r != nil {
		if l := level(r.Served, c); l != nil {
			out = append(out, ClientRatio{"svc bench", l.ThroughputRPS, l.ThroughputRPS / base, l.Errors})
		}
	}
	return out
}

// bestClient is the ratio with the highest throughput (nil: none).
func bestClient(rs []ClientRatio) *ClientRatio {
	var best *ClientRatio
	for i := range rs {
		if best == nil || rs[i].RPS > best.RPS {
			best = &rs[i]
		}
	}
	return best
}

// fmtRatios writes "wrk 0.72 (540/s), svc bench 0.68 (510/s)".
func fmtRatios(rs []ClientRatio) string {
	var parts []string
	for _, r := range rs {
		s := fmt.Sprintf("%s %s (%s/s)", r.Client, fmtRatio(r.Ratio), fmtRPS(r.RPS))
		if r.Errors > 0 {
			s += fmt.Sprintf(", %d failed", r.Errors)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func protoTitle(p bench.Protocol) string {
	for _, n := range protoNames {
		if n.key == p {
			return n.title
		}
	}
	return string(p)
}

func modelTitle(key string) string {
	for _, m := range servedModels {
		if m.key == key {
			return m.title
		}
	}
	return key
}

// BaselineTargets checks the served ÷ raw baseline targets at concurrency
// 16, each on the better of svc bench and wrk where both ran, and shows
// the concurrency-1 ratios beside them.
func BaselineTargets(d Data) []Target {
	var out []Target
	for _, rt := range ratioTargets {
		judged := "svc bench"
		if rt.proto == bench.ProtocolV1 {
			judged = "the better of svc bench and wrk"
		}
		t := Target{
			Key:      rt.key,
			Goal:     fmt.Sprintf("%s, %s, concurrency %d: served ≥ %.2f × the raw baseline (%s)", modelTitle(rt.model), protoTitle(rt.proto), ratioLevel, rt.min, judged),
			Measured: "not measured",
		}
		rs := ratiosAt(d, rt.model, rt.proto, ratioLevel)
		best := bestClient(rs)
		if best == nil {
			out = append(out, t)
			continue
		}
		base := baselineOf(d.Served, rt.model)
		t.Measured = fmt.Sprintf("%s by %s (%s; baseline %s items/s)", fmtRatio(best.Ratio), best.Client, fmtRatios(rs), fmtRPS(base))
		if c1 := ratiosAt(d, rt.model, rt.proto, 1); len(c1) > 0 {
			t.Measured += "; concurrency 1: " + fmtRatios(c1)
		}
		t.Met = met(best.Ratio >= rt.min && best.Errors == 0)
		switch {
		case best.Ratio < rt.min:
			t.Miss = fmt.Sprintf("%.2f: %s/s by %s against the %s/s (%.2f × %s) needed", rt.min-best.Ratio, fmtRPS(best.RPS), best.Client, fmtRPS(rt.min*base), rt.min, fmtRPS(base))
		case best.Errors > 0:
			t.Miss = fmt.Sprintf("%d failed requests", best.Errors)
		}
		out = append(out, t)
	}
	return out
}

// ValidationTarget checks request validation's share of the server's CPU
// in the det profile at concurrency 16.
func ValidationTarget(p *Profile) Target {
	t := Target{Key: "validate", Goal: fmt.Sprintf("PaddleOCR det, v1 JSON, concurrency %d: request validation (`openapi.(*Validator).ValidateBody`) ≤ %.0f %% of the server's CPU", ratioLevel, validateMaxShare*100), Measured: "not measured"}
	if p == nil {
		return t
	}
	parts, total := p.Breakdown()
	s := share(parts, total, partValidate)
	t.Measured = fmt.Sprintf("%.1f %% (%.2f s of the server's %.2f s in the profiled run)", 100*s, s*total, total)
	if n := p.requests(); n > 0 {
		t.Measured += fmt.Sprintf("; %s per request", bench.FormatMicros(1e6*s*total/float64(n)))
	}
	t.Met = met(s <= validateMaxShare)
	if s > validateMaxShare {
		t.Miss = fmt.Sprintf("%.1f percentage points", 100*(s-validateMaxShare))
	}
	return t
}

// logCost is the access log's CPU in a profile: the line in the handler,
// the log writer goroutine, and their share of the server's CPU.
func logCost(p *Profile) (line, writer, shareOf float64) {
	_, total := p.Breakdown()
	line, writer = p.Cum[fnAccessLine], p.Cum[fnLogWriter]
	if total > 0 {
		shareOf = (line + writer) / total
	}
	return line, writer, shareOf
}

// cpuPerRequest is the server's CPU per request of a profiled run, in µs.
func cpuPerRequest(p *Profile) float64 {
	if p == nil || p.requests() == 0 {
		return 0
	}
	return 1e6 * p.CPU.ServerCPUS / float64(p.requests())
}

// AccessLogTarget checks the access log's share of the server's CPU at the
// tiny model's saturation with the log on, and puts the server's CPU per
// request with the log on and off beside it.
func AccessLogTarget(on, off *Profile) Target {
	t := Target{Key: "access-log", Goal: fmt.Sprintf("tiny model, concurrency %d, `--access-log all`: the access log (`transport.accessLogger.write` and the log writer goroutine `transport.(*LogWriter).run`) ≤ %.0f %% of the server's CPU", ratioLevel, logMaxShare*100), Measured: "not measured"}
	if on == nil {
		return t
	}
	line, writer, s := logCost(on)
	_, total := on.Breakdown()
	t.Measured = fmt.Sprintf("%.1f %% (access line %.1f %%, log writer %.1f %%)", 100*s, 100*line/max(total, 1e-9), 100*writer/max(total, 1e-9))
	if a, b := cpuPerRequest(on), cpuPerRequest(off); a > 0 && b > 0 {
		t.Measured += fmt.Sprintf("; server CPU per request %.1f µs with the log, %.1f µs with `--access-log off` (%+.0f %%)", a, b, 100*(a/b-1))
	}
	t.Met = met(s <= logMaxShare)
	if s > logMaxShare {
		t.Miss = fmt.Sprintf("%.1f percentage points", 100*(s-logMaxShare))
	}
	return t
}

// tailOf is p99 ÷ p50 of one run.
func tailOf(p50, p99 float64) float64 {
	if p50 <= 0 {
		return 0
	}
	return p99 / p50
}

// TailTarget checks the tiny model's p99 ÷ p50 at concurrency 4 under wrk
// (bench-served.sh), with svc bench's run beside it.
func TailTarget(s Served) Target {
	t := Target{Key: "tail", Goal: fmt.Sprintf("tiny model, concurrency %d: p99 ≤ %.0f × p50 (wrk)", tailLevel, tailMaxRatio), Measured: "not measured"}
	m := servedModel(s, "tiny")
	if m == nil {
		return t
	}
	var l *ServedLevel
	for i := range m.Levels {
		if m.Levels[i].Concurrency == tailLevel {
			l = &m.Levels[i]
		}
	}
	if l == nil || l.Wrk == nil || l.Wrk.LatencyUS.P50 <= 0 {
		return t
	}
	w := l.Wrk
	r := tailOf(w.LatencyUS.P50, w.LatencyUS.P99)
	t.Measured = fmt.Sprintf("wrk %.1f (p50 %s, p99 %s, %s/s)", r, bench.FormatMicros(w.LatencyUS.P50), bench.FormatMicros(w.LatencyUS.P99), fmtRPS(w.RPS()))
	if bl := l.benchLevel(); bl != nil && bl.LatencyUS.P50 > 0 {
		t.Measured += fmt.Sprintf("; svc bench %.1f (p50 %s, p99 %s, %s/s)", tailOf(bl.LatencyUS.P50, bl.LatencyUS.P99),
			bench.FormatMicros(bl.LatencyUS.P50), bench.FormatMicros(bl.LatencyUS.P99), fmtRPS(bl.ThroughputRPS))
	}
	t.Met = met(r <= tailMaxRatio && w.Failed() == 0)
	if r > tailMaxRatio {
		t.Miss = fmt.Sprintf("%.1f: p99 %s against the %s (%.0f × p50) allowed", r-tailMaxRatio, bench.FormatMicros(w.LatencyUS.P99), bench.FormatMicros(tailMaxRatio*w.LatencyUS.P50), tailMaxRatio)
	}
	return t
}

// PerfTargets are the targets of this file, in order.
func PerfTargets(d Data) []Target {
	out := BaselineTargets(d)
	out = append(out, ValidationTarget(d.Profiles[profDet16]))
	out = append(out, AccessLogTarget(d.Profiles[profLogOn], d.Profiles[profLogOff]))
	return append(out, TailTarget(d.Served), TailOwnCoreTarget(d.Tail))
}

// writeBaselineRatios renders the ratio targets' figures: per model and
// protocol, each load generator at concurrency 1 and 16.
func writeBaselineRatios(w io.Writer, d Data) {
	fmt.Fprintf(w, "## Served ÷ raw baseline at concurrency 1 and %d\n\n", ratioLevel)
	fmt.Fprintf(w, "The targets' figures: served throughput over the raw baseline of `build/bench-served.sh` (same model, same shape; section below). v1 JSON comes from `build/bench-served.sh` (svc bench and wrk against one server), v2 binary tensors from `build/bench-protocols.sh` (svc bench only). The targets are at concurrency %d, judged on the better client; concurrency 1 is shown for comparison, without a target.\n\n", ratioLevel)
	fmt.Fprintln(w, "| model | protocol | client | concurrency 1 | ÷ baseline | concurrency 16 | ÷ baseline | target |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|")
	rows := 0
	for _, rt := range ratioTargets {
		c1, c16 := ratiosAt(d, rt.model, rt.proto, 1), ratiosAt(d, rt.model, rt.proto, ratioLevel)
		for _, client := range []string{"svc bench", "wrk"} {
			a, b := findClient(c1, client), findClient(c16, client)
			if a == nil && b == nil {
				continue
			}
			cell := func(r *ClientRatio) (string, string) {
				if r == nil {
					return "", ""
				}
				return fmtRPS(r.RPS) + "/s", fmtRatio(r.Ratio)
			}
			r1, x1 := cell(a)
			r16, x16 := cell(b)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | ≥ %.2f |\n", modelTitle(rt.model), protoTitle(rt.proto), client, r1, x1, r16, x16, rt.min)
			rows++
		}
	}
	if rows == 0 {
		fmt.Fprintln(w, "| | | | not measured | | | | |")
	}
	fmt.Fprintln(w)
}

func findClient(rs []ClientRatio, client string) *ClientRatio {
	for i := range rs {
		if rs[i].Client == client {
			return &rs[i]
		}
	}
	return nil
}

// whyBaseline explains a missed served ÷ baseline target with the profile
// of the same model and protocol at concurrency 16.
func whyBaseline(w io.Writer, d Data, key string) {
	for _, rt := range ratioTargets {
		if rt.key != key {
			continue
		}
		base := baselineOf(d.Served, rt.model)
		fmt.Fprintf(w, "The raw baseline (%s items/s) is ONNX Runtime in one process with both cores to itself and its inputs decoded beforehand; served, the same cores also read, validate and decode every request, encode and write every answer, and run the load generator.", fmtRPS(base))
		p := d.Profiles[rt.prof]
		if p == nil {
			fmt.Fprintln(w, " (The profile was not taken.)")
			fmt.Fprintln(w)
			return
		}
		parts, total := p.Breakdown()
		inf := share(parts, total, partInference)
		cores := float64(max(p.Run.Machine.CPUs, 1))
		busy := (p.CPU.ServerCPUS + p.CPU.BenchCPUS) / (max(p.CPU.WallS, 1e-9) * cores)
		fmt.Fprintf(w, " In the profiled run below the server and svc bench together kept %s of the %.0f cores busy and svc bench took %s of that; inference was %s of the server's CPU, and the largest other parts %s (%s the profiler did not sample).",
			pct(busy), cores, pct(p.CPU.LoadShare()), pct(inf), biggest(parts, total, 4, partInference, partOther, partUnsampled), pct(share(parts, total, partUnsampled)))
		est := busy * (1 - p.CPU.LoadShare()) * inf
		fmt.Fprintf(w, " Multiplied, %s × %s × %s ≈ %s of the cores ran the model: with the baseline keeping both cores on inference, about %s is what served ÷ baseline could reach in that run.",
			pct(busy), pct(1-p.CPU.LoadShare()), pct(inf), pct(est), fmtRatio(est))
		fmt.Fprintln(w, pinnedSentence(d, rt.model, rt.proto))
		fmt.Fprintln(w)
		writeProfile(w, p, fmt.Sprintf("%s, %s, concurrency %d", modelTitle(rt.model), protoTitle(rt.proto), ratioLevel))
		return
	}
}

// whyAccessLog shows where the access log's CPU goes, with the profile.
func whyAccessLog(w io.Writer, d Data) {
	on, off := d.Profiles[profLogOn], d.Profiles[profLogOff]
	if on == nil {
		fmt.Fprintln(w, "The profile was not taken.")
		fmt.Fprintln(w)
		return
	}
	line, writer, _ := logCost(on)
	_, total := on.Breakdown()
	fmt.Fprintf(w, "Each request formats its line in the handler's goroutine (`transport.accessLogger.write`: %.2f s, %.1f %%); the log writer goroutine gathers the lines and writes them out in batches (`transport.(*LogWriter).run`, its system calls included: %.2f s, %.1f %%).",
		line, 100*line/max(total, 1e-9), writer, 100*writer/max(total, 1e-9))
	if a, b := cpuPerRequest(on), cpuPerRequest(off); a > 0 && b > 0 {
		fmt.Fprintf(w, " Across two separate runs, the server's CPU per request was %.1f µs with the log and %.1f µs without it (%+.0f %%); the runs are seconds apart on a shared machine, so that difference carries their noise.", a, b, 100*(a/b-1))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	writeProfile(w, on, fmt.Sprintf("tiny model, concurrency %d, access log all", ratioLevel))
}

// whyValidation shows det's profile under a missed validation target.
func whyValidation(w io.Writer, d Data) {
	p := d.Profiles[profDet16]
	if p == nil {
		fmt.Fprintln(w, "The profile was not taken.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "Validation scans the body for the inputs' keys and checks their nesting; on det's body (%s) it is a single pass over the bytes.\n\n", kib(p.Run.Settings.BodyBytes))
	writeProfile(w, p, fmt.Sprintf("PaddleOCR det, v1 JSON, concurrency %d", ratioLevel))
}

// writeBinaryProfile puts the profile of v2 binary tensors at concurrency
// 16 under the older binary-tensor target of model: a pointer when the
// served ÷ baseline target of the same path shows it already (missed), the
// profile itself otherwise.
func writeBinaryProfile(w io.Writer, d Data, model string) {
	for i, rt := range ratioTargets {
		if rt.model != model || rt.proto != bench.ProtocolV2Binary {
			continue
		}
		p := d.Profiles[rt.prof]
		if p == nil {
			return
		}
		if t := BaselineTargets(d)[i]; t.Met != nil && !*t.Met {
			fmt.Fprintf(w, "The profile of this path (v2 binary tensors, concurrency %d) is under \"%s\" below.\n\n", ratioLevel, t.Goal)
			return
		}
		writeProfile(w, p, fmt.Sprintf("%s, %s, concurrency %d", modelTitle(rt.model), protoTitle(rt.proto), ratioLevel))
		return
	}
}
