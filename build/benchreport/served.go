package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// The models and protocols of make bench, in table order, with their
// names in the tables; others found in the artifacts follow, by key.
var (
	modelOrder  = []string{"tiny", "cls", "det"}
	modelTitles = map[string]string{"tiny": "tiny model", "cls": "PaddleOCR cls", "det": "PaddleOCR det"}
	protoOrder  = []string{"v1", "v2-json", "v2-binary", "grpc"}
	protoTitles = map[string]string{"v1": "v1 JSON", "v2-json": "v2 JSON", "v2-binary": "v2 binary", "grpc": "gRPC"}
)

func title(titles map[string]string, key string) string {
	if t, ok := titles[key]; ok {
		return t
	}
	return key
}

// ratioTargets are the served ÷ raw baseline rows: model, protocol and the
// target at concurrency ratioLevel. v1 comes from build/bench-served.sh
// (svc bench and wrk), v2 binary from build/bench-protocols.sh (svc bench).
var ratioTargets = []struct {
	model, proto string
	target       float64
}{
	{"cls", "v1", 0.60}, {"det", "v1", 0.90}, {"cls", "v2-binary", 0.85}, {"det", "v2-binary", 0.85},
}

const ratioLevel = 16

// servedModel is build/bench-served.sh's runs of one model: the raw
// baseline (served-MODEL-raw.txt, BenchmarkRaw's lines) and, per
// concurrency, svc bench's and wrk's runs against one server, each with
// the CPU both sides used.
type servedModel struct {
	key    string
	raw    *RawBench
	levels []servedLevel
}

type servedLevel struct {
	c        int
	bench    *Report
	benchCPU *LoadCPU
	wrk      *Wrk
	wrkCPU   *LoadCPU
}

var servedFile = regexp.MustCompile(`^served-([a-z0-9]+)-(raw\.txt|svcbench-c([0-9]+)\.json|wrk-c([0-9]+)\.json)$`)

func loadServed(a *artifacts, d *data) error {
	var models keyed[servedModel]
	for _, m := range a.match(servedFile) {
		sm := models.at(m[1], func() servedModel { return servedModel{key: m[1]} })
		if m[2] == "raw.txt" {
			raw, err := a.rawBench(m[0])
			if err != nil {
				return err
			}
			sm.raw = raw
			continue
		}
		c, _ := strconv.Atoi(m[3] + m[4])
		l := sm.level(c)
		cpu, err := optional[LoadCPU](a, m[0][:len(m[0])-len(".json")]+".cpu.json")
		if err != nil {
			return err
		}
		if m[3] != "" {
			l.bench, l.benchCPU = new(Report), cpu
			_, err = a.json(m[0], l.bench)
		} else {
			l.wrk, l.wrkCPU = new(Wrk), cpu
			_, err = a.json(m[0], l.wrk)
		}
		if err != nil {
			return err
		}
	}
	for _, sm := range models.in(modelOrder) {
		slices.SortFunc(sm.levels, func(x, y servedLevel) int { return x.c - y.c })
		d.served = append(d.served, sm)
	}
	return nil
}

// level returns the level at concurrency c, adding it when missing.
func (m *servedModel) level(c int) *servedLevel {
	for i := range m.levels {
		if m.levels[i].c == c {
			return &m.levels[i]
		}
	}
	m.levels = append(m.levels, servedLevel{c: c})
	return &m.levels[len(m.levels)-1]
}

// baselineMode is one in-process mode of BenchmarkRaw: items/s over the
// repetitions.
type baselineMode struct {
	label string
	items stat
}

// baselineModes lists BenchmarkRaw's modes (each batch size on one session,
// and N sessions × T threads at batch 1) and the strongest: the mode whose
// best repetition reached the most items/s. The baseline is that
// repetition's items/s.
func baselineModes(r *RawBench) (modes []baselineMode, best int) {
	if r == nil {
		return nil, -1
	}
	type key struct {
		batch             int64
		sessions, threads int
	}
	var keys []key
	vals := map[key][]float64{}
	for _, run := range r.Runs {
		k := key{run.Batch, run.Sessions, run.Threads}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = append(vals[k], run.RowsPerS)
	}
	slices.SortStableFunc(keys, func(x, y key) int {
		if (x.sessions > 0) != (y.sessions > 0) {
			return x.sessions - y.sessions
		}
		return int(x.batch - y.batch)
	})
	best = -1
	for _, k := range keys {
		label := fmt.Sprintf("batch %d, one session", k.batch)
		if k.sessions > 0 {
			label = fmt.Sprintf("%d %s × %d %s, batch %d", k.sessions, plural(k.sessions, "session"), k.threads, plural(k.threads, "thread"), k.batch)
		}
		modes = append(modes, baselineMode{label: label, items: statOf(vals[k])})
		if best < 0 || modes[len(modes)-1].items.max > modes[best].items.max {
			best = len(modes) - 1
		}
	}
	return modes, best
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// baseline is the model's raw baseline in items/s (0: not measured).
func baseline(r *RawBench) float64 {
	modes, best := baselineModes(r)
	if best < 0 {
		return 0
	}
	return modes[best].items.max
}

func (d *data) servedModel(key string) *servedModel {
	for i := range d.served {
		if d.served[i].key == key {
			return &d.served[i]
		}
	}
	return nil
}

// clientRate is one load generator's throughput at one level.
type clientRate struct {
	client string
	rps    float64
}

// rates gives each load generator's throughput at concurrency c for model
// and protocol: svc bench and wrk from build/bench-served.sh on v1, svc
// bench from build/bench-protocols.sh on the others.
func (d *data) rates(model, proto string, c int) []clientRate {
	var out []clientRate
	if proto == "v1" {
		if m := d.servedModel(model); m != nil {
			for _, l := range m.levels {
				if l.c != c {
					continue
				}
				if b := l.bench.first(); b.ok() {
					out = append(out, clientRate{"svc bench", b.ThroughputRPS})
				}
				if l.wrk != nil && l.wrk.RPS() > 0 {
					out = append(out, clientRate{"wrk", l.wrk.RPS()})
				}
			}
		}
		return out
	}
	if r := d.protoRun(model, proto); r != nil {
		if l := level(r.Served, c); l.ok() {
			out = append(out, clientRate{"svc bench", l.ThroughputRPS})
		}
	}
	return out
}

func rateOf(rs []clientRate, client string) (float64, bool) {
	for _, r := range rs {
		if r.client == client {
			return r.rps, true
		}
	}
	return 0, false
}

// writeRatios writes served ÷ raw baseline at concurrency 1 and
// ratioLevel for the target rows.
func writeRatios(w *doc, d *data) {
	t := newTable(3, "model", "protocol", "client", "c=1 req/s", "c=1 ÷ baseline",
		fmt.Sprintf("c=%d req/s", ratioLevel), fmt.Sprintf("c=%d ÷ baseline", ratioLevel), "baseline items/s", fmt.Sprintf("target at c=%d", ratioLevel))
	for _, rt := range ratioTargets {
		m := d.servedModel(rt.model)
		if m == nil {
			continue
		}
		base := baseline(m.raw)
		if base <= 0 {
			continue
		}
		at1, at16 := d.rates(rt.model, rt.proto, 1), d.rates(rt.model, rt.proto, ratioLevel)
		for _, client := range []string{"svc bench", "wrk"} {
			r1, ok1 := rateOf(at1, client)
			r16, ok16 := rateOf(at16, client)
			if !ok1 && !ok16 {
				continue
			}
			cells := []string{title(modelTitles, rt.model), title(protoTitles, rt.proto), client, "", "", "", "", rps(base), fmt.Sprintf("≥ %.2f", rt.target)}
			if ok1 {
				cells[3], cells[4] = rps(r1), ratio(r1/base)
			}
			if ok16 {
				cells[5], cells[6] = rps(r16), ratio(r16/base)
			}
			t.row(cells...)
		}
	}
	w.section(fmt.Sprintf("Served ÷ raw baseline at concurrency 1 and %d", ratioLevel), t)
}

func writeBaseline(w *doc, d *data) {
	t := newTable(2, "model", "mode", "items/s", "baseline")
	for _, m := range d.served {
		modes, best := baselineModes(m.raw)
		for i, x := range modes {
			mark := ""
			if i == best {
				mark = rps(x.items.max)
			}
			t.row(title(modelTitles, m.key), x.label, x.items.format(rps), mark)
		}
	}
	w.section("Raw baseline: ONNX Runtime in process (build/bench-served.sh, BenchmarkRaw)", t)
}

func writeServed(w *doc, d *data) {
	t := newTable(2, "model", "client", "concurrency", "req/s", "÷ baseline", "p50", "p99", "server CPU", "client CPU", "failed")
	for _, m := range d.served {
		base := baseline(m.raw)
		div := func(v float64) string {
			if base <= 0 {
				return ""
			}
			return ratio(v / base)
		}
		cpu := func(c *LoadCPU) (string, string) {
			if c == nil {
				return "", ""
			}
			return cpuShare(c.ServerCPUS, c.WallS), cpuShare(c.ClientCPUS, c.WallS)
		}
		for _, l := range m.levels {
			if b := l.bench.first(); b != nil {
				s, c := cpu(l.benchCPU)
				t.row(title(modelTitles, m.key), "svc bench", strconv.Itoa(l.c), rps(b.ThroughputRPS), div(b.ThroughputRPS),
					us(b.LatencyUS.P50), us(b.LatencyUS.P99), s, c, strconv.FormatInt(b.Errors, 10))
			}
			if x := l.wrk; x != nil {
				s, c := cpu(l.wrkCPU)
				t.row(title(modelTitles, m.key), "wrk", strconv.Itoa(l.c), rps(x.RPS()), div(x.RPS()),
					us(x.LatencyUS.P50), us(x.LatencyUS.P99), s, c, strconv.FormatInt(x.Failed(), 10))
			}
		}
	}
	w.section("Served: svc bench and wrk against one server (build/bench-served.sh)", t)
}

// protoModel is build/bench-protocols.sh's runs of one model: svc bench
// --raw per protocol (proto-MODEL-PROTOCOL.json).
type protoModel struct {
	key  string
	runs map[string]*Report
}

var protoFile = regexp.MustCompile(`^proto-([a-z0-9]+)-([a-z0-9-]+)\.json$`)

func loadProtocols(a *artifacts, d *data) error {
	var models keyed[protoModel]
	for _, m := range a.match(protoFile) {
		pm := models.at(m[1], func() protoModel { return protoModel{key: m[1], runs: map[string]*Report{}} })
		r, err := optional[Report](a, m[0])
		if err != nil {
			return err
		}
		pm.runs[m[2]] = r
	}
	d.protos = models.in(modelOrder)
	return nil
}

func (d *data) protoRun(model, proto string) *Report {
	for _, m := range d.protos {
		if m.key == model {
			return m.runs[proto]
		}
	}
	return nil
}

func protocols(runs map[string]*Report) []string {
	var keys []string
	for k := range runs {
		keys = append(keys, k)
	}
	return ordered(keys, protoOrder)
}

func writeProtocols(w *doc, d *data) {
	t := newTable(2, "model", "protocol", "concurrency", "body", "served req/s", "raw req/s", "served ÷ raw", "served p50", "errors")
	for _, m := range d.protos {
		for _, p := range protocols(m.runs) {
			r := m.runs[p]
			for _, s := range r.Served {
				raw, div := "", ""
				if x := level(r.Raw, s.Concurrency); x != nil {
					raw = rps(x.ThroughputRPS)
					if x.ThroughputRPS > 0 {
						div = ratio(s.ThroughputRPS / x.ThroughputRPS)
					}
				}
				t.row(title(modelTitles, m.key), title(protoTitles, p), strconv.Itoa(s.Concurrency), fmt.Sprintf("%.0f KiB", float64(r.Settings.BodyBytes)/1024),
					rps(s.ThroughputRPS), raw, div, us(s.LatencyUS.P50), strconv.FormatInt(s.Errors, 10))
			}
		}
	}
	w.section("Protocols: served ÷ in-process ONNX Runtime of the same run (build/bench-protocols.sh)", t)
}

// pinnedModel is build/bench-pinned.sh's runs of one model: BenchmarkRaw
// on CPU 0 alone (pinned-MODEL-raw.txt) and svc bench on CPU 1 against the
// server on CPU 0, per protocol (pinned-MODEL-PROTOCOL.json).
type pinnedModel struct {
	key  string
	raw  *RawBench
	runs map[string]*Report
}

var pinnedFile = regexp.MustCompile(`^pinned-([a-z0-9]+)-(?:(raw)\.txt|([a-z0-9-]+)\.json)$`)

func loadPinned(a *artifacts, d *data) error {
	var models keyed[pinnedModel]
	for _, m := range a.match(pinnedFile) {
		pm := models.at(m[1], func() pinnedModel { return pinnedModel{key: m[1], runs: map[string]*Report{}} })
		var err error
		if m[2] == "raw" {
			pm.raw, err = a.rawBench(m[0])
		} else {
			pm.runs[m[3]], err = optional[Report](a, m[0])
		}
		if err != nil {
			return err
		}
	}
	d.pinned = models.in(modelOrder)
	return nil
}

func writePinned(w *doc, d *data) {
	t := newTable(3, "model", "raw on CPU 0 (best mode)", "protocol", "concurrency", "served req/s", "p50", "served ÷ raw")
	for _, m := range d.pinned {
		modes, best := baselineModes(m.raw)
		rawText, raw := "", 0.0
		if best >= 0 {
			raw = modes[best].items.max
			rawText = fmt.Sprintf("%s items/s (%s)", rps(raw), modes[best].label)
		}
		for _, p := range protocols(m.runs) {
			for _, l := range m.runs[p].Served {
				div := ""
				if raw > 0 {
					div = ratio(l.ThroughputRPS / raw)
				}
				t.row(title(modelTitles, m.key), rawText, title(protoTitles, p), strconv.Itoa(l.Concurrency), rps(l.ThroughputRPS), us(l.LatencyUS.P50), div)
			}
		}
	}
	w.section("Server on a core of its own, svc bench on the other (build/bench-pinned.sh)", t)
}
