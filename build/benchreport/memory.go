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
	check *RSSCheck
	runs  [2]*Report // memory-1.json, memory-2.json
	types []memType
	// bursts are the in-flight runs: the defaults' and the variants', in
	// burstOrder.
	bursts []burst
}

// burst is one in-flight run of build/bench-memory.sh: mem-inflight.* (the
// defaults) or mem-inflight-VARIANT.*.
type burst struct {
	variant  string
	inflight *InflightRSS
	run      *Report
	goMem    map[string]float64 // go_memstats_NAME_bytes after the burst, by NAME
}

// burstOrder and burstTitles are the in-flight runs' variants, in column
// order, with their titles: "" is the defaults'.
var (
	burstOrder  = []string{"", "noreclaim"}
	burstTitles = map[string]string{"": "defaults", "noreclaim": "release_memory_after: 0s"}
)

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
	for _, v := range burstOrder {
		pre := "mem-inflight"
		if v != "" {
			pre += "-" + v
		}
		b := burst{variant: v}
		if b.inflight, err = optional[InflightRSS](a, pre+".rss.json"); err != nil {
			return err
		}
		if b.run, err = optional[Report](a, pre+".json"); err != nil {
			return err
		}
		if b.inflight == nil || b.run == nil {
			continue
		}
		b.goMem = parseGoMem(a.text(pre + ".metrics.txt"))
		m.bursts = append(m.bursts, b)
	}
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
	head := []string{"in flight"}
	for _, b := range m.bursts {
		head = append(head, title(burstTitles, b.variant))
	}
	t := newTable(1, head...)
	if len(m.bursts) == 0 {
		return t
	}
	// row adds a row of one cell per run, when any run has one.
	row := func(name string, cell func(b burst) string) {
		cells := []string{name}
		filled := false
		for _, b := range m.bursts {
			c := cell(b)
			filled = filled || c != ""
			cells = append(cells, c)
		}
		if filled {
			t.row(cells...)
		}
	}
	row("input x", func(b burst) string {
		return fmt.Sprintf("[%d, 256], %s of JSON", b.inflight.Batch, mibBytes(float64(b.run.Settings.BodyBytes)))
	})
	row("server environment", func(b burst) string { return b.inflight.Env })
	row("concurrency", func(b burst) string { return strconv.Itoa(b.inflight.Concurrency) })
	row("requests (failed)", func(b burst) string {
		n, errs := served(b.run)
		return fmt.Sprintf("%d (%d)", n, errs)
	})
	row("answered after", func(b burst) string {
		if l := b.run.first(); l.ok() {
			return fmt.Sprintf("%s to %s", us(l.LatencyUS.Min), us(l.LatencyUS.Max))
		}
		return ""
	})
	row("idle, after one request", func(b burst) string { return mib(b.inflight.IdleKiB) })
	row("peak (VmHWM)", func(b burst) string { return mib(b.inflight.PeakKiB) })
	row("peak − idle", func(b burst) string { return mib(b.inflight.PeakKiB - b.inflight.IdleKiB) })
	row("(peak − idle) ÷ bodies in flight", func(b burst) string {
		in, body := b.inflight, float64(b.run.Settings.BodyBytes)
		if body <= 0 || in.Concurrency <= 0 {
			return ""
		}
		return fmt.Sprintf("%.1f×", float64(in.PeakKiB-in.IdleKiB)*1024/(float64(in.Concurrency)*body))
	})
	row("at the last answer", func(b burst) string { return mib(b.inflight.EndKiB) })
	settle := 0
	for _, b := range m.bursts {
		settle = max(settle, len(b.inflight.AfterKiB))
	}
	for i := 0; i < settle; i++ {
		row(fmt.Sprintf("%d s after", i+1), func(b burst) string {
			if i < len(b.inflight.AfterKiB) {
				return mib(b.inflight.AfterKiB[i])
			}
			return ""
		})
	}
	row(fmt.Sprintf("given back %d s after (of what the burst added)", settle), func(b burst) string {
		in := b.inflight
		if k := len(in.AfterKiB); k > 0 && in.PeakKiB > in.IdleKiB {
			return pct(float64(in.PeakKiB-in.AfterKiB[k-1]) / float64(in.PeakKiB-in.IdleKiB))
		}
		return ""
	})
	for _, g := range []struct{ key, name string }{
		{"heap_inuse", "Go heap in use"}, {"heap_idle", "Go heap idle"},
		{"heap_released", "Go heap returned to the system"}, {"next_gc", "Go's next GC at"},
	} {
		row(g.name, func(b burst) string {
			if v, ok := b.goMem[g.key]; ok {
				return mibBytes(v)
			}
			return ""
		})
	}
	return t
}
