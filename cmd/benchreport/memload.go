package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// Memory targets of build/bench-memory.sh.
const (
	// memMaxPerInFlight bounds the extra RSS per request in flight, as a
	// multiple of its body size.
	memMaxPerInFlight = 8.0
	// memMaxAfterBurst bounds the RSS after a burst: within this share of
	// the idle RSS before it.
	memMaxAfterBurst = 0.10
	// memSettleS is the second after the burst the burst target reads.
	memSettleS = 5
)

// memTypes are the element types of testdata/models/vectors.onnx, in
// table order, with their names.
// size is the bytes of one element in a Go tensor (0 for strings: a
// 16-byte header plus the bytes).
var memTypes = []struct {
	key, title string
	size       int
}{
	{"f32", "float32", 4}, {"f64", "float64", 8}, {"f16", "float16", 2}, {"bf16", "bfloat16", 2},
	{"i8", "int8", 1}, {"i16", "int16", 2}, {"i32", "int32", 4}, {"i64", "int64", 8},
	{"u8", "uint8", 1}, {"u16", "uint16", 2}, {"u32", "uint32", 4}, {"u64", "uint64", 8},
	{"bool", "bool", 1}, {"str", "string", 0},
}

// tensorBytes estimates the bytes of x's large input as a Go tensor: the
// element size × elements (strings: a 16-byte header each plus their
// bytes, about the JSON minus quotes and comma).
func (x MemType) tensorBytes() float64 {
	for _, t := range memTypes {
		if t.key != x.Type {
			continue
		}
		if t.size > 0 {
			return float64(t.size) * float64(x.Elements)
		}
		return 16*float64(x.Elements) + float64(x.BodyBytes()) - 3*float64(x.Elements)
	}
	return 0
}

// MemType is one element type's run: idle RSS of a fresh server, its peak
// after svc bench at Concurrency with bodies large in that type.
type MemType struct {
	Type        string `json:"type"`
	Elements    int64  `json:"elements"`
	Concurrency int    `json:"concurrency"`
	IdleKiB     int64  `json:"idle_kib"`
	PeakKiB     int64  `json:"peak_kib"`
	// Run is the svc bench report (nil: missing).
	Run *bench.Report `json:"-"`
	// Alloc is the top of the server's allocation profile (nil: missing).
	Alloc *AllocProfile `json:"-"`
}

// requests counts the run's requests, failed ones included.
func (m MemType) requests() int64 {
	if m.Run == nil {
		return 0
	}
	var n int64
	for _, l := range m.Run.Served {
		n += l.Requests
	}
	return n
}

// BodyBytes is the mean body size of the run.
func (m MemType) BodyBytes() int {
	if m.Run == nil {
		return 0
	}
	return m.Run.Settings.BodyBytes
}

// Factor is the extra RSS at the peak over the bytes in flight
// (concurrency × body size); 0 when unknown.
func (m MemType) Factor() float64 {
	b := m.BodyBytes()
	if b <= 0 || m.Concurrency <= 0 {
		return 0
	}
	return float64(m.PeakKiB-m.IdleKiB) * 1024 / (float64(m.Concurrency) * float64(b))
}

// errors counts the run's failed requests.
func (m MemType) errors() int64 {
	if m.Run == nil {
		return 0
	}
	return errorsIn(m.Run.Served)
}

// MemInflight is the slow-model run: idle RSS after one warm-up request,
// the peak while Concurrency requests were in flight, the RSS at the end
// and each second after it.
type MemInflight struct {
	Batch       int     `json:"batch"`
	Concurrency int     `json:"concurrency"`
	IdleKiB     int64   `json:"idle_kib"`
	PeakKiB     int64   `json:"peak_kib"`
	EndKiB      int64   `json:"end_kib"`
	AfterKiB    []int64 `json:"after_kib"`
	Env         string  `json:"env"`
	Run         *bench.Report
	// GoMem is Go's memory statistics read from GET /metrics after the
	// last reading (go_memstats_NAME_bytes by NAME; nil: not read).
	GoMem map[string]float64
}

// Factor is the extra RSS at the peak per request in flight over its body
// size; 0 when unknown.
func (m *MemInflight) Factor() float64 {
	if m.Run == nil || m.Run.Settings.BodyBytes <= 0 || m.Concurrency <= 0 {
		return 0
	}
	return float64(m.PeakKiB-m.IdleKiB) * 1024 / (float64(m.Concurrency) * float64(m.Run.Settings.BodyBytes))
}

// after is the RSS s seconds after the burst (the last reading when the
// run stopped reading earlier); ok is false without readings.
func (m *MemInflight) after(s int) (kib int64, at int, ok bool) {
	if len(m.AfterKiB) == 0 {
		return 0, 0, false
	}
	i := min(s, len(m.AfterKiB)) - 1
	return m.AfterKiB[i], i + 1, true
}

// MemLoad is everything build/bench-memory.sh wrote.
type MemLoad struct {
	Types    []MemType
	Inflight *MemInflight
}

// readMemLoad reads mem-type-T.rss.json with mem-type-T.json, and
// mem-inflight.rss.json with mem-inflight.json; what is missing is left
// out.
func readMemLoad(dir string) (MemLoad, error) {
	var out MemLoad
	for _, t := range memTypes {
		var m MemType
		ok, err := readJSON(dir, "mem-type-"+t.key+".rss.json", &m)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		var r bench.Report
		if ok, err := readJSON(dir, "mem-type-"+t.key+".json", &r); err != nil {
			return out, err
		} else if ok {
			m.Run = &r
		}
		if text := readText(dir, "mem-type-"+t.key+".alloc.txt"); text != "" {
			p, err := parseAllocTop(text)
			if err != nil {
				return out, fmt.Errorf("mem-type-%s.alloc.txt: %w", t.key, err)
			}
			m.Alloc = p
		}
		out.Types = append(out.Types, m)
	}
	var in MemInflight
	ok, err := readJSON(dir, "mem-inflight.rss.json", &in)
	if err != nil || !ok {
		return out, err
	}
	var r bench.Report
	if ok, err := readJSON(dir, "mem-inflight.json", &r); err != nil {
		return out, err
	} else if ok {
		in.Run = &r
	}
	if text := readText(dir, "mem-inflight.metrics.txt"); text != "" {
		in.GoMem = parseGoMem(text)
	}
	out.Inflight = &in
	return out, nil
}

// parseGoMem reads the go_memstats_NAME_bytes lines of a Prometheus
// exposition.
func parseGoMem(s string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		name, ok := strings.CutPrefix(f[0], "go_memstats_")
		if name, ok2 := strings.CutSuffix(name, "_bytes"); ok && ok2 {
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				out[name] = v
			}
		}
	}
	return out
}

func typeTitle(key string) string {
	for _, t := range memTypes {
		if t.key == key {
			return t.title
		}
	}
	return key
}

// whyMemTypes puts each type's factor beside the size of its tensor
// relative to its JSON.
func whyMemTypes(w io.Writer, m MemLoad) {
	fmt.Fprintf(w, "The factor compares the server's extra memory with the JSON bodies in flight, but a request holds more than its body: its input as a tensor, the model's output (vectors.onnx returns each input as it is: a tensor as large again) and the JSON answer (about the body's size again, written into the body's buffer). The tensor's size relative to the body depends on the type: a random integer from 0 to 9 is 2 bytes of JSON (\"3,\") and 8 bytes as an int64, so for int64 the input tensor alone is 4× the body, and a request holding its input, output and answer at once would hold about 2 × 4 + 2 = 10×, over the %.0f× bound before any overhead. Requests seldom hold all three at once: an input goes back to the pools as soon as its run is over, and only as many runs as cores are in flight, the other requests holding their body and input while they wait or their output and answer while it is written. Per type (tensor bytes: element size × elements; strings: a 16-byte header per string plus its bytes):\n\n", memMaxPerInFlight)
	fmt.Fprintln(w, "| type | JSON bytes per element | tensor bytes per element | tensor ÷ body | estimate: 2 × tensor ÷ body + 2 | measured factor | measured ÷ estimate |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|")
	lo, hi := 0.0, 0.0
	for _, x := range m.Types {
		if x.Elements <= 0 || x.BodyBytes() <= 0 {
			continue
		}
		body := float64(x.BodyBytes())
		r := x.tensorBytes() / body
		est := 2*r + 2
		q := x.Factor() / est
		if lo == 0 || q < lo {
			lo = q
		}
		hi = max(hi, q)
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.2f× | %.1f× | %.1f× | %.1f |\n", typeTitle(x.Type), body/float64(x.Elements), x.tensorBytes()/float64(x.Elements), r, est, x.Factor(), q)
	}
	fmt.Fprintln(w)
	if hi > 0 {
		fmt.Fprintf(w, "The measured factors are %.1f to %.1f times the estimate. Numeric tensors of 64 KiB or more and the request bodies come from svc's tensor pools (one free list per size, shared by every request) and go back to them, the inputs as soon as the run is over, the outputs and the body (the answer is written over it) once the answer is sent: they do not become garbage. The estimate leaves out the rest: the pools keeping the buffers of the requests recently in flight, the garbage of the smaller allocations (GOGC 100 lets it reach the size of the live heap) and, for strings, which are not pooled, every copy on the way to and from ONNX Runtime. ONNX Runtime holds each string element as a 32-byte C++ string (plus the text of those longer than 15 bytes), for the input and again for the output: 64 bytes per element against the 8.5 bytes of JSON of a short word, so its copies alone are about 7.5× the body, in C memory that Go's profile does not see. The types whose tensors are large beside their JSON are the ones at or over the bound; the full table is under Memory below.\n\n", lo, hi)
	}
	for _, x := range m.Types {
		if x.Factor() > memMaxPerInFlight {
			writeAllocProfile(w, x)
			if x.Type == "str" && x.Alloc != nil && x.requests() > 0 && x.BodyBytes() > 0 {
				body := float64(x.BodyBytes())
				goPer := x.Alloc.Total / float64(x.requests()) / body
				cpp := 2 * 32 * float64(x.Elements) / body
				fmt.Fprintf(w, "Besides Go's %.1f× per request, ONNX Runtime's C++ strings for the input and the output take 2 × 32 bytes × %d elements, %.1f× the body, in C memory: a request of strings allocates about %.1f× its body, much of it held until its answer is written, so four of them in flight are over the %.0f× bound however soon the garbage is collected. Holding strings in fewer copies would take a string tensor that is one buffer of text and one of offsets from the JSON to ONNX Runtime and back; ONNX Runtime's C API takes and gives strings only as its own C++ strings.\n\n",
					goPer, x.Elements, cpp, goPer+cpp, memMaxPerInFlight)
			}
		}
	}
}

// MemLoadTargets checks peak RSS per element type, the extra RSS per
// request in flight and the RSS after a burst.
func MemLoadTargets(m MemLoad) []Target {
	t1 := Target{Key: "mem-types", Goal: fmt.Sprintf("peak RSS while serving, for each of the %d input element types (strings included): peak − idle ≤ %.0f × the bytes in flight (concurrency × body size)", len(memTypes), memMaxPerInFlight), Measured: "not measured"}
	if len(m.Types) > 0 {
		var worst, best *MemType
		var over, missing []string
		var errs int64
		seen := map[string]bool{}
		for i := range m.Types {
			x := &m.Types[i]
			seen[x.Type] = true
			errs += x.errors()
			if x.Factor() <= 0 && x.PeakKiB < x.IdleKiB {
				continue
			}
			if worst == nil || x.Factor() > worst.Factor() {
				worst = x
			}
			if best == nil || x.Factor() < best.Factor() {
				best = x
			}
			if x.Factor() > memMaxPerInFlight || x.BodyBytes() == 0 {
				over = append(over, fmt.Sprintf("%s %.1f×", typeTitle(x.Type), x.Factor()))
			}
		}
		for _, t := range memTypes {
			if !seen[t.key] {
				missing = append(missing, t.title)
			}
		}
		if worst != nil {
			t1.Measured = fmt.Sprintf("%d types: from %.1f× (%s) to %.1f× (%s; peak %s over idle %s)", len(m.Types), best.Factor(), typeTitle(best.Type),
				worst.Factor(), typeTitle(worst.Type), mib(worst.PeakKiB), mib(worst.IdleKiB))
			t1.Met = met(len(over) == 0 && len(missing) == 0 && errs == 0)
			if len(over) > 0 {
				t1.Measured += "; over " + fmt.Sprintf("%.0f×", memMaxPerInFlight) + ": " + strings.Join(over, ", ")
				t1.Miss = fmt.Sprintf("%d of %d types (%s)", len(over), len(m.Types), strings.Join(over, ", "))
			}
			if len(missing) > 0 {
				t1.Measured += "; not measured: " + strings.Join(missing, ", ")
			}
			if errs > 0 {
				t1.Measured += fmt.Sprintf("; %d failed requests", errs)
			}
		}
	}
	t2 := Target{Key: "mem-inflight", Goal: fmt.Sprintf("extra RSS per request in flight ≤ %.0f × its body size (slow.onnx, concurrent requests of about 1 MiB)", memMaxPerInFlight), Measured: "not measured"}
	t3 := Target{Key: "mem-burst", Goal: fmt.Sprintf("RSS %d s after that burst within %.0f %% of the idle RSS before it", memSettleS, memMaxAfterBurst*100), Measured: "not measured"}
	if in := m.Inflight; in != nil && in.Run != nil {
		errs := errorsIn(in.Run.Served)
		if f := in.Factor(); f > 0 {
			t2.Measured = fmt.Sprintf("%.1f× (peak − idle %s over %d requests of %s)", f, mib(in.PeakKiB-in.IdleKiB), in.Concurrency, mibBytes(in.Run.Settings.BodyBytes))
			t2.Met = met(f <= memMaxPerInFlight && errs == 0)
			if f > memMaxPerInFlight {
				t2.Miss = fmt.Sprintf("%.1f× (%.1f× against %.0f×)", f-memMaxPerInFlight, f, memMaxPerInFlight)
			}
			if errs > 0 {
				t2.Measured += fmt.Sprintf("; %d failed requests", errs)
			}
		}
		if kib, at, ok := in.after(memSettleS); ok && in.IdleKiB > 0 {
			over := float64(kib-in.IdleKiB) / float64(in.IdleKiB)
			t3.Measured = fmt.Sprintf("%+.1f %% (idle %s, peak %s, %d s after %s", over*100, mib(in.IdleKiB), mib(in.PeakKiB), at, mib(kib))
			if extra := in.PeakKiB - in.IdleKiB; extra > 0 {
				t3.Measured += fmt.Sprintf(": %.0f %% of what the burst added given back", 100*float64(in.PeakKiB-kib)/float64(extra))
			}
			t3.Measured += ")"
			t3.Met = met(over <= memMaxAfterBurst && at >= memSettleS)
			if over > memMaxAfterBurst {
				t3.Miss = fmt.Sprintf("%.1f percentage points (%+.1f %% against %.0f %%)", 100*(over-memMaxAfterBurst), over*100, memMaxAfterBurst*100)
			}
		}
	}
	return []Target{t1, t2, t3}
}

func mibBytes(b int) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

// writeMemLoad renders the per-type table and the in-flight and burst
// readings (under ## Memory).
func writeMemLoad(w io.Writer, m MemLoad) {
	fmt.Fprintln(w, "### Peak RSS per input element type")
	fmt.Fprintln(w)
	if len(m.Types) == 0 {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "`build/bench-memory.sh`: for each type, a fresh `svc serve testdata/models/vectors.onnx` (a 1-D input of every element type) with the defaults, loaded by `svc bench --url` with bodies large in that type (its input about 1 MiB of JSON, every other input one element). Idle is VmRSS once the server is ready, before any request; peak is VmHWM (`/proc/<pid>/status`) after the run. The factor is (peak − idle) ÷ (concurrency × body size); target ≤ %.0f×.\n", memMaxPerInFlight)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| type | elements | body | concurrency | requests | idle | peak | peak − idle | factor | result |")
		fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
		for _, x := range m.Types {
			reqs, errs := x.requests(), x.errors()
			res := "met"
			if x.Factor() > memMaxPerInFlight || x.BodyBytes() == 0 || errs > 0 {
				res = "**missed**"
			}
			req := fmt.Sprintf("%d", reqs)
			if errs > 0 {
				req += fmt.Sprintf(" (%d failed)", errs)
			}
			fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %s | %s | %s | %.1f× | %s |\n", typeTitle(x.Type), x.Elements, mibBytes(x.BodyBytes()), x.Concurrency, req,
				mib(x.IdleKiB), mib(x.PeakKiB), mib(x.PeakKiB-x.IdleKiB), x.Factor(), res)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "### Requests in flight, and after the burst")
	fmt.Fprintln(w)
	in := m.Inflight
	if in == nil || in.Run == nil {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	var reqs, errs int64
	for _, l := range in.Run.Served {
		reqs += l.Requests
		errs += l.Errors
	}
	env := ""
	if in.Env != "" {
		env = " with `" + in.Env + "`"
	}
	lat := ""
	if len(in.Run.Served) > 0 && in.Run.Served[0].Requests > in.Run.Served[0].Errors {
		l := in.Run.Served[0].LatencyUS
		lat = fmt.Sprintf(", each answered after %s to %s", bench.FormatMicros(l.Min), bench.FormatMicros(l.Max))
	}
	fmt.Fprintf(w, "`svc serve testdata/models/slow.onnx`%s (a chain of 1500 layers, slow on purpose), warmed up with one request of input x [%d, 256] (%s of JSON), then idle for a second: **%s**. Then `svc bench --url` at concurrency %d with such requests for %s (%d requests, %d failed%s): the requests wait for the model with their body read and their input decoded. The peak (VmHWM, reset after the warm-up) was **%s**: %s more, **%.1f× the %d bodies in flight** (%s each).\n",
		env, in.Batch, mibBytes(in.Run.Settings.BodyBytes), mib(in.IdleKiB), in.Concurrency, fmtSeconds(in.Run.Settings.DurationS), reqs, errs, lat, mib(in.PeakKiB), mib(in.PeakKiB-in.IdleKiB), in.Factor(), in.Concurrency, mibBytes(in.Run.Settings.BodyBytes))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "After the last answer the RSS was %s, then, one second apart:", mib(in.EndKiB))
	for i, k := range in.AfterKiB {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, " %s", mib(k))
	}
	fmt.Fprint(w, ".")
	if kib, at, ok := in.after(memSettleS); ok && in.PeakKiB > in.IdleKiB {
		given := float64(in.PeakKiB-kib) / float64(in.PeakKiB-in.IdleKiB)
		fmt.Fprintf(w, " %d s after the burst, %.0f %% of what it added had been given back to the system. ", at, 100*given)
		writeGoMem(w, in.GoMem)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// writeGoMem says what Go's own statistics (after the readings) show of
// the memory kept after the burst.
func writeGoMem(w io.Writer, m map[string]float64) {
	inuse, okU := m["heap_inuse"]
	idle, okI := m["heap_idle"]
	released, okR := m["heap_released"]
	next, okN := m["next_gc"]
	if !okU || !okI || !okR || !okN {
		fmt.Fprint(w, "Go's heap statistics were not read.")
		return
	}
	mb := func(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
	fmt.Fprintf(w, "Go's statistics at the last reading (GET /metrics, `go_memstats_*`): heap in use %s (live objects and the garbage no GC cycle has collected yet), idle heap %s of which %s returned to the system, so about %s of Go heap resident; next GC at %s of heap. ",
		mb(inuse), mb(idle), mb(released), mb(inuse+idle-released), mb(next))
	fmt.Fprint(w, "Go returns idle heap gradually (its background scavenger), and garbage only after a GC cycle, which an idle server with its heap below the next goal does not start before Go forces one (every two minutes); `GOMEMLIMIT` acts only when Go's memory nears the limit. The rest of the RSS is ONNX Runtime's (its CPU arena keeps what it grew to), C allocations and the binary. Giving the memory back soon after a burst would take the server running a GC and returning the freed pages (`debug.FreeOSMemory`) once it goes idle.")
}
