package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The element types of build/bench-memory.sh, in table order, with their
// names.
var (
	typeOrder  = []string{"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool", "str"}
	typeTitles = map[string]string{
		"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
		"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
		"u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "bool": "bool", "str": "string",
	}
)

// memory is what the memory steps wrote: build/bench.sh's check of the RSS
// over many requests, and build/bench-memory.sh's runs per element type and
// of requests in flight.
type memory struct {
	check    *RSSCheck
	runs     [2]*Report // memory-1.json, memory-2.json
	types    []memType
	inflight *InflightRSS
	burst    *Report
	goMem    map[string]float64 // go_memstats_NAME_bytes after the burst, by NAME
}

type memType struct {
	rss TypeRSS
	run *Report
}

var memTypeFile = regexp.MustCompile(`^mem-type-([a-z0-9]+)\.rss\.json$`)

func loadMemory(a *artifacts, d *data) error {
	m := &d.memory
	var err error
	if m.check, err = optional[RSSCheck](a, "memory.json"); err != nil {
		return err
	}
	for i := range m.runs {
		if m.runs[i], err = optional[Report](a, fmt.Sprintf("memory-%d.json", i+1)); err != nil {
			return err
		}
	}
	var types keyed[memType]
	for _, f := range a.match(memTypeFile) {
		var x memType
		if _, err := a.json(f[0], &x.rss); err != nil {
			return err
		}
		if x.run, err = optional[Report](a, "mem-type-"+f[1]+".json"); err != nil {
			return err
		}
		types.at(f[1], func() memType { return x })
	}
	m.types = types.in(typeOrder)
	if m.inflight, err = optional[InflightRSS](a, "mem-inflight.rss.json"); err != nil {
		return err
	}
	if m.burst, err = optional[Report](a, "mem-inflight.json"); err != nil {
		return err
	}
	m.goMem = parseGoMem(a.text("mem-inflight.metrics.txt"))
	return nil
}

// parseGoMem reads the go_memstats_NAME_bytes samples of an exposition.
func parseGoMem(s string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(line, " ")
		name, okPre := strings.CutPrefix(name, "go_memstats_")
		name, okSuf := strings.CutSuffix(name, "_bytes")
		if !ok || !okPre || !okSuf {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// served sums a report's served requests and errors.
func served(r *Report) (requests, errors int64) {
	if r == nil {
		return 0, 0
	}
	for _, l := range r.Served {
		requests += l.Requests
		errors += l.Errors
	}
	return requests, errors
}

func writeMemory(w *doc, d *data) {
	m := d.memory
	check := rssCheckTable(m)
	types := typesTable(m)
	inflight := inflightTable(m)
	if len(check.rows)+len(types.rows)+len(inflight.rows) == 0 {
		return
	}
	w.heading("Memory of the server (build/bench.sh, build/bench-memory.sh)")
	if len(check.rows) > 0 {
		w.subheading("VmRSS over many requests: the tiny model, concurrency 4")
		w.table(check)
	}
	if len(types.rows) > 0 {
		w.subheading("Peak RSS per input element type: vectors.onnx, bodies of about 1 MiB")
		w.table(types)
	}
	if len(inflight.rows) > 0 {
		w.subheading("Requests in flight, and after the burst: slow.onnx")
		w.table(inflight)
	}
}

// rssCheckTable tabulates the RSS after each run of the memory check,
// with the /predict requests so far (svc bench's probes, one per body,
// included).
func rssCheckTable(m memory) *table {
	t := newTable(1, "reading", "requests so far", "VmRSS", "vs the first")
	if m.check == nil || m.runs[0] == nil || m.runs[1] == nil {
		return t
	}
	var n int64
	for i, kib := range []int64{m.check.KiB1, m.check.KiB2} {
		r, errs := served(m.runs[i])
		n += r + int64(m.runs[i].Settings.Bodies)
		vs := ""
		if i > 0 && m.check.KiB1 > 0 {
			vs = fmt.Sprintf("%+.1f %%", 100*(float64(kib)/float64(m.check.KiB1)-1))
		}
		label := fmt.Sprintf("after run %d", i+1)
		if errs > 0 {
			label += fmt.Sprintf(" (%d failed)", errs)
		}
		t.row(label, strconv.FormatInt(n, 10), mib(kib), vs)
	}
	return t
}

func typesTable(m memory) *table {
	t := newTable(1, "type", "elements", "body", "concurrency", "requests", "failed", "idle", "peak", "peak − idle", "(peak − idle) ÷ bodies in flight")
	for _, x := range m.types {
		n, errs := served(x.run)
		body, factor := "", ""
		if x.run != nil && x.run.Settings.BodyBytes > 0 {
			b := float64(x.run.Settings.BodyBytes)
			body = mibBytes(b)
			if x.rss.Concurrency > 0 {
				factor = fmt.Sprintf("%.1f×", float64(x.rss.PeakKiB-x.rss.IdleKiB)*1024/(float64(x.rss.Concurrency)*b))
			}
		}
		t.row(title(typeTitles, x.rss.Type), strconv.FormatInt(x.rss.Elements, 10), body, strconv.Itoa(x.rss.Concurrency),
			strconv.FormatInt(n, 10), strconv.FormatInt(errs, 10), mib(x.rss.IdleKiB), mib(x.rss.PeakKiB), mib(x.rss.PeakKiB-x.rss.IdleKiB), factor)
	}
	return t
}

func inflightTable(m memory) *table {
	t := newTable(1, "in flight", "")
	in, r := m.inflight, m.burst
	if in == nil || r == nil {
		return t
	}
	n, errs := served(r)
	body := float64(r.Settings.BodyBytes)
	t.row("input x", fmt.Sprintf("[%d, 256], %s of JSON", in.Batch, mibBytes(body)))
	if in.Env != "" {
		t.row("server environment", in.Env)
	}
	t.row("concurrency", strconv.Itoa(in.Concurrency))
	t.row("requests (failed)", fmt.Sprintf("%d (%d)", n, errs))
	if l := r.first(); l.ok() {
		t.row("answered after", fmt.Sprintf("%s to %s", us(l.LatencyUS.Min), us(l.LatencyUS.Max)))
	}
	t.row("idle, after one request", mib(in.IdleKiB))
	t.row("peak (VmHWM)", mib(in.PeakKiB))
	t.row("peak − idle", mib(in.PeakKiB-in.IdleKiB))
	if body > 0 && in.Concurrency > 0 {
		t.row("(peak − idle) ÷ bodies in flight", fmt.Sprintf("%.1f×", float64(in.PeakKiB-in.IdleKiB)*1024/(float64(in.Concurrency)*body)))
	}
	t.row("at the last answer", mib(in.EndKiB))
	for i, kib := range in.AfterKiB {
		t.row(fmt.Sprintf("%d s after", i+1), mib(kib))
	}
	if k := len(in.AfterKiB); k > 0 && in.PeakKiB > in.IdleKiB {
		t.row(fmt.Sprintf("given back %d s after (of what the burst added)", k), pct(float64(in.PeakKiB-in.AfterKiB[k-1])/float64(in.PeakKiB-in.IdleKiB)))
	}
	for _, g := range []struct{ key, name string }{
		{"heap_inuse", "Go heap in use"}, {"heap_idle", "Go heap idle"},
		{"heap_released", "Go heap returned to the system"}, {"next_gc", "Go's next GC at"},
	} {
		if v, ok := m.goMem[g.key]; ok {
			t.row(g.name, mibBytes(v))
		}
	}
	return t
}
