package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// Data is everything the report read.
type Data struct {
	Tiny, Cls *bench.Report
	Mem       *Memory
	Tune      Tuning
	Raw       *RawBatch
	// Protocols are the runs per protocol on cls and det.
	Protocols Protocols
	// Served are the served ÷ raw baseline runs (svc bench and wrk).
	Served Served
	// MemLoad is the memory per element type, in flight and after a burst.
	MemLoad MemLoad
	// Tail is the tail-latency experiment (build/bench-tail.sh).
	Tail Tail
	// Pinned are the runs with the server and the load generator on
	// separate cores (build/bench-pinned.sh).
	Pinned Pinned
	// Profiles by name (profTiny, profCls, …); missing ones are absent.
	Profiles map[string]*Profile
}

// shortNames name the parts in running text.
var shortNames = map[string]string{
	partInference: "inference",
	partDecode:    "JSON decoding",
	partValidate:  "validation",
	partReadBody:  "reading the body",
	partEncode:    "JSON encoding",
	partMerge:     "merging and splitting batches",
	partLog:       "the access log",
	partHandler:   "the rest of the handler",
	partHTTP:      "HTTP outside the handler",
	partSched:     "the Go scheduler",
	partGC:        "the garbage collector",
	partOther:     "other sampled code",
	partUnsampled: "time the profiler did not sample",
}

// shortName names a part in running text; decoding and encoding by the
// protocol the profile's functions belong to (see codecLabel).
func shortName(q Part) string {
	switch {
	case q.Key == partDecode && strings.HasPrefix(q.Name, "v2 "):
		return "decoding the v2 request"
	case q.Key == partEncode && strings.HasPrefix(q.Name, "writing the v2"):
		return "writing the v2 answer"
	}
	return shortNames[q.Key]
}

// biggest lists the largest parts, but those in skip, as "name N %".
func biggest(parts []Part, total float64, n int, skip ...string) string {
	var ps []Part
	for _, q := range parts {
		if q.Seconds > 0 && !contains(skip, q.Key) {
			ps = append(ps, q)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Seconds > ps[j].Seconds })
	var out []string
	for i := 0; i < len(ps) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s %.0f %%", shortName(ps[i]), 100*ps[i].Seconds/total))
	}
	return strings.Join(out, ", ")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func pct(v float64) string { return fmt.Sprintf("%.0f %%", v*100) }

// writeWhy writes, for each missed target, by how much, why, and the
// profile that shows where the time goes.
func writeWhy(w io.Writer, targets []Target, d Data) {
	var missed []Target
	for _, t := range targets {
		if t.Met != nil && !*t.Met {
			missed = append(missed, t)
		}
	}
	if len(missed) == 0 {
		return
	}
	fmt.Fprintln(w, "## Missed targets: by how much and why")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The profiles are Go CPU profiles of the server (`SVC_CPUPROFILE`, written when it stops) in separate short runs with the default settings unless said otherwise; the server's and svc bench's CPU time come from `/proc/<pid>/stat` and the shell's `times` around the run. Shares are of the server's CPU time; a part is a subtree of the profile's call graph, so the parts do not overlap.")
	fmt.Fprintln(w)
	for _, t := range missed {
		fmt.Fprintf(w, "### %s\n\n", t.Goal)
		if t.Miss != "" {
			fmt.Fprintf(w, "**Missed by %s.**\n\n", t.Miss)
		}
		switch t.Key {
		case "tiny-p50":
			whyTiny(w, d)
		case "cls-share":
			whyCls(w, d)
		case "batch-gain":
			whyBatchGain(w, d)
		case "batch-p50":
			whyBatchP50(w, d)
		case "binary-cls", "binary-det", "grpc-cls", "grpc-det":
			whyBinary(w, d, t.Key[strings.IndexByte(t.Key, '-')+1:])
		case "base-cls-v1", "base-det-v1", "base-cls-bin", "base-det-bin":
			whyBaseline(w, d, t.Key)
		case "validate":
			whyValidation(w, d)
		case "access-log":
			whyAccessLog(w, d)
		case "tail":
			whyTail(w, d)
		case "tail-own-core":
			whyTailOwnCore(w, d.Tail)
		case "mem-types":
			whyMemTypes(w, d.MemLoad)
		case "mem-burst":
			if in := d.MemLoad.Inflight; in != nil && in.GoMem != nil {
				writeGoMem(w, in.GoMem)
				fmt.Fprintln(w, " The readings are under Memory below.")
				fmt.Fprintln(w)
			} else {
				fmt.Fprintln(w, "Go's heap statistics were not read; the readings are under Memory below.")
				fmt.Fprintln(w)
			}
		default:
			fmt.Fprintln(w, "No profile applies to this target; the figures are in the section below.")
			fmt.Fprintln(w)
		}
	}
}

func whyTiny(w io.Writer, d Data) {
	p := d.Profiles[profTiny]
	raw := ""
	if d.Tiny != nil {
		if r := level(d.Tiny.Raw, 1); r != nil {
			raw = fmt.Sprintf(" (%s in process)", bench.FormatMicros(r.LatencyUS.P50))
		}
	}
	fmt.Fprintf(w, "At concurrency 1 nothing overlaps between requests: svc bench writes a request to the loopback socket; the server wakes up, reads, validates and decodes it, runs the model%s, encodes and writes the answer; svc bench wakes up and reads it. Two processes and their threads take turns on the same 2 cores, and every turn is a system call and a wake-up.", raw)
	if p == nil {
		fmt.Fprintln(w, " (The profile was not taken.)")
		fmt.Fprintln(w)
		return
	}
	parts, total := p.Breakdown()
	n := p.requests()
	l := level(p.Run.Served, 1)
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	if n > 0 && l != nil && l.ThroughputRPS > 0 {
		srv, cli := 1e6*p.CPU.ServerCPUS/float64(n), 1e6*p.CPU.BenchCPUS/float64(n)
		mean := 1e6 / l.ThroughputRPS
		fmt.Fprintf(w, "In the profiled run the server used %s of CPU per request and svc bench %s, on the same cores", bench.FormatMicros(srv), bench.FormatMicros(cli))
		if srv+cli > mean {
			fmt.Fprintf(w, "; together more than the %s a request took on average, so part of that CPU is spent alongside the requests rather than on their path (idle Go threads spinning while they look for work, for one: `runtime.findRunnable`)", bench.FormatMicros(mean))
		} else {
			fmt.Fprintf(w, "; together %s of the %s a request took on average, the rest is waiting for a core or a wake-up", pct((srv+cli)/mean), bench.FormatMicros(mean))
		}
		fmt.Fprint(w, ". ")
	}
	inf := share(parts, total, partInference)
	fmt.Fprintf(w, "Inference is %s of the server's CPU; the largest other parts are %s, and %s the profiler did not sample. Across the parts, %s of the server's CPU is in system calls and %s in futex calls (threads waking each other).",
		pct(inf), biggest(parts, total, 4, partInference, partOther, partUnsampled), pct(share(parts, total, partUnsampled)), pct(p.Cum[fnSyscall]/total), pct(p.Cum[fnFutex]/total))
	if inf < 0.25 {
		fmt.Fprint(w, " For a model this small a request's cost is the HTTP round trip between two processes, not the model: the server's time goes to net/http, system calls and the Go scheduler, and svc bench's own work per request competes for the same 2 cores.")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	writeProfile(w, p, "tiny model, concurrency 1")
}

func whyCls(w io.Writer, d Data) {
	p := d.Profiles[profCls]
	fmt.Fprint(w, "raw+codec decodes the JSON, runs the model and encodes the answer in one process that has both cores to itself; served, that work gets only part of them.")
	if p == nil {
		fmt.Fprintln(w, " (The profile was not taken.)")
		fmt.Fprintln(w)
		return
	}
	parts, total := p.Breakdown()
	inf, dec, enc := share(parts, total, partInference), share(parts, total, partDecode), share(parts, total, partEncode)
	work := inf + dec + enc
	cores := float64(max(p.Run.Machine.CPUs, 1))
	busy := (p.CPU.ServerCPUS + p.CPU.BenchCPUS) / (max(p.CPU.WallS, 1e-9) * cores)
	conc := ""
	if l := bench.Best(p.Run.Served); l != nil {
		conc = fmt.Sprintf(" at concurrency %d", l.Concurrency)
	}
	fmt.Fprintf(w, " In the profiled run%s the server and svc bench together kept %s of the %.0f cores busy, and svc bench took %s of that (it writes every %d KB body to the socket and reads the answers). Of the server's CPU, %s went to the work raw+codec does too (inference %s, JSON decoding %s, JSON encoding %s) and the rest to what only serving does: %s; %s the profiler did not sample.",
		conc, pct(busy), cores, pct(p.CPU.LoadShare()), p.Run.Settings.BodyBytes/1000, pct(work), pct(inf), pct(dec), pct(enc),
		biggest(parts, total, 5, partInference, partDecode, partEncode, partOther, partUnsampled), pct(share(parts, total, partUnsampled)))
	est := busy * (1 - p.CPU.LoadShare()) * work
	fmt.Fprintf(w, " Multiplied, %s × %s × %s ≈ %s of the cores did raw+codec's work in that run",
		pct(busy), pct(1-p.CPU.LoadShare()), pct(work), pct(est))
	if d.Cls != nil {
		if c, l := bench.Best(d.Cls.RawCodec), bench.Best(p.Run.Served); c != nil && l != nil && c.ThroughputRPS > 0 {
			fmt.Fprintf(w, "; it served %s/s, %s of raw+codec's best (the sweep's best served level, above, reached %s)",
				fmtRPS(l.ThroughputRPS), pct(l.ThroughputRPS/c.ThroughputRPS), pct(bestShare(d.Cls)))
		}
	}
	fmt.Fprint(w, ".")
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	writeProfile(w, p, "PaddleOCR cls"+conc)
}

// bestShare is the cls target's measure: best served ÷ best raw+codec.
func bestShare(r *bench.Report) float64 {
	s, c := bench.Best(r.Served), bench.Best(r.RawCodec)
	if s == nil || c == nil || c.ThroughputRPS == 0 {
		return 0
	}
	return s.ThroughputRPS / c.ThroughputRPS
}

func whyBatchGain(w io.Writer, d Data) {
	off, on := d.Profiles[profBatchOff], d.Profiles[profBatchOn]
	body := ""
	for _, p := range []*Profile{off, on} {
		if p != nil && p.Run.Settings.BodyBytes > 0 && body == "" {
			body = fmt.Sprintf(" (%d KB of JSON)", p.Run.Settings.BodyBytes/1000)
		}
	}
	fmt.Fprintf(w, "Batching makes only inference cheaper per row. Everything else a request costs stays per request: reading and validating its body%s, decoding it, HTTP, and svc bench's own work on the same cores. With batching off, the %d concurrent requests still run concurrently on the one session (ONNX Runtime allows concurrent runs).", body, batchConcurrency)
	gb, gr, ok := batchingGains(d.Tune, d.Raw)
	if off != nil && ok && gr > 0 {
		parts, total := off.Breakdown()
		// The upper figure counts all the time the profiler did not sample
		// as inference: the bound below is then generous.
		lo := share(parts, total, partInference)
		f := lo + share(parts, total, partUnsampled)
		bound := amdahl(f, gr)
		fmt.Fprintf(w, " In the profile with batching off, inference is %s of the server's CPU (%s if all the time the profiler did not sample was inference too). If every request were merged into batches of %d at no cost, making inference %s cheaper per row as in process and leaving the rest as it is, the served gain would be about %+.1f %% (Amdahl's law: 1 ÷ (1 − %.2f + %.2f ÷ %.2f) − 1), a ratio of about %.2f",
			pct(lo), pct(f), rawBatchSize, pct(1-1/(1+gr)), bound*100, f, f, 1+gr, bound/gr)
		switch {
		case bound/gr < batchGainShare*0.85:
			fmt.Fprint(w, ": the target is out of reach on this model while inference is this small a part of a request")
		case bound/gr < batchGainShare:
			fmt.Fprint(w, ": the target is at the edge of what batching can give on this model")
		}
		fmt.Fprint(w, ". The load generator's own work per request, on the same cores, lowers that further.")
		if bound > 0 {
			if gb/bound >= 0.9 {
				fmt.Fprintf(w, " The measured gain, %+.1f %%, is as much as that estimate allows (%s of it; the estimate comes from one profiled run and the gain from the rounds, so they agree only within the noise): batching gets about all there is to get here.", gb*100, pct(gb/bound))
			} else {
				fmt.Fprintf(w, " The measured gain, %+.1f %%, is %s of that estimate.", gb*100, pct(gb/bound))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	if on != nil && off != nil {
		writePerRequest(w, on, off, gr, ok, d.Tune["default"])
	}
	if on != nil {
		writeProfile(w, on, "PaddleOCR cls, concurrency 32, batching on")
	}
	if off != nil {
		writeProfile(w, off, "PaddleOCR cls, concurrency 32, batching off")
	}
}

// PerRequest is what one request cost in a profiled run: CPU times in µs,
// Busy the share of the cores the server and svc bench kept busy.
type PerRequest struct {
	Server, Inference, Decode, Validate, Merge, Bench float64
	Busy, RPS                                         float64
}

// perRequest divides the run's CPU by its requests. The parts come from
// the profile (the server's whole life), the totals from /proc over the
// run.
func perRequest(p *Profile) (PerRequest, bool) {
	n := float64(p.requests())
	l := bench.Best(p.Run.Served)
	if n == 0 || l == nil {
		return PerRequest{}, false
	}
	parts, _ := p.Breakdown()
	part := func(key string) float64 {
		for _, q := range parts {
			if q.Key == key {
				return 1e6 * q.Seconds / n
			}
		}
		return 0
	}
	r := PerRequest{
		Server: 1e6 * p.CPU.ServerCPUS / n, Bench: 1e6 * p.CPU.BenchCPUS / n,
		Inference: part(partInference), Decode: part(partDecode), Validate: part(partValidate), Merge: part(partMerge),
		RPS: l.ThroughputRPS,
	}
	if p.CPU.WallS > 0 && p.Run.Machine.CPUs > 0 {
		r.Busy = (p.CPU.ServerCPUS + p.CPU.BenchCPUS) / (p.CPU.WallS * float64(p.Run.Machine.CPUs))
	}
	return r, true
}

// writePerRequest compares what a request cost with batching on and off;
// def are the defaults' rounds, for the spread of single runs.
func writePerRequest(w io.Writer, on, off *Profile, gr float64, haveRaw bool, def []bench.Report) {
	spread := ""
	if s := summarize(def, batchConcurrency, throughput); s.N > 1 && s.Median > 0 {
		spread = fmt.Sprintf(" (in the rounds, single runs of the defaults at concurrency %d ranged from %s below to %s above their median)",
			batchConcurrency, pct(1-s.Min/s.Median), pct(s.Max/s.Median-1))
	}
	a, okA := perRequest(on)
	b, okB := perRequest(off)
	if !okA || !okB || b.Server == 0 || b.Inference == 0 || b.RPS == 0 {
		return
	}
	change := func(x, y float64) string {
		if y == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.0f %%", 100*(x/y-1))
	}
	us := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	fmt.Fprintln(w, "What a request cost in the two profiled runs below (CPU time per request, µs; the parts from the profiles, the totals from `/proc`):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| per request, concurrency 32 | batching on | batching off | on vs off |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, row := range []struct {
		name string
		x, y float64
	}{
		{"server CPU", a.Server, b.Server},
		{"of which inference", a.Inference, b.Inference},
		{"of which JSON decoding", a.Decode, b.Decode},
		{"of which validation", a.Validate, b.Validate},
		{"of which merging and splitting", a.Merge, b.Merge},
		{"svc bench CPU", a.Bench, b.Bench},
	} {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.name, us(row.x), us(row.y), change(row.x, row.y))
	}
	fmt.Fprintf(w, "| cores busy (server and svc bench) | %s | %s | |\n", pct(a.Busy), pct(b.Busy))
	fmt.Fprintf(w, "| throughput | %s/s | %s/s | %s |\n", fmtRPS(a.RPS), fmtRPS(b.RPS), change(a.RPS, b.RPS))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "With batching on, the inference CPU per request changed by %s", change(a.Inference, b.Inference))
	if haveRaw && gr > 0 {
		fmt.Fprintf(w, " (in process, a row costs %s less at batch %d than at batch 1)", pct(1-1/(1+gr)), rawBatchSize)
	}
	fmt.Fprintf(w, " and the server's CPU per request by %s; decoding, validation and HTTP stay per request. ", change(a.Server, b.Server))
	if a.Busy > 0 && b.Busy > 0 && a.Busy < b.Busy-0.02 {
		fmt.Fprintf(w, "The cores were less busy with batching on (%s against %s): with one session, batching runs one merged batch at a time, where without it the requests' runs overlap. ", pct(a.Busy), pct(b.Busy))
	}
	fmt.Fprintf(w, "Throughput changed by %s between these two single runs%s; the rounds in the batching section below are the measurement of the target.\n\n", change(a.RPS, b.RPS), spread)
}

func whyBatchP50(w io.Writer, d Data) {
	fmt.Fprint(w, "At concurrency 1 a request finds the session free and runs at once, alone (`core.(*Batcher).runAlone`): batching adds a mutex and a shape key, nothing that waits.")
	if p := d.Profiles[profTiny]; p != nil {
		var own float64
		for fn, s := range p.Flat {
			if strings.HasPrefix(fn, "github.com/svc-dev/svc/core.(*Batcher).") {
				own += s
			}
		}
		_, total := p.Breakdown()
		fmt.Fprintf(w, " In the tiny model's concurrency-1 profile (batching on) the batcher's own code is %.1f %% of the server's CPU.", 100*own/total)
	}
	def, off, side := batchP50Runs(d.Tune)
	by, unit := "Round by round", "rounds"
	if side {
		by, unit = "Pair by pair (two servers side by side)", "pairs"
	}
	rs := pairedRatios(def, off, 1, p50)
	ratios := make([]string, len(rs))
	slower, n := 0, len(rs)
	for i, r := range rs {
		ratios[i] = fmt.Sprintf("%.2f", r)
		if r > 1 {
			slower++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, " %s, p50 on ÷ off was %s: batching on was slower in %d of %d %s", by, strings.Join(ratios, ", "), slower, n, unit)
		if slower > 0 && slower < n {
			fmt.Fprint(w, ". The ratio goes both ways, so the miss is most likely the run-to-run noise of this shared machine rather than a cost of batching.")
		} else {
			fmt.Fprint(w, ".")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}
