package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// Files of one profiled run NAME (build/bench.sh, profile_run).
const (
	fileProfRun = "prof-%s.json"     // svc bench --url --json
	fileProfCPU = "prof-%s.cpu.json" // CPU of the server and of svc bench
	fileProfTop = "prof-%s.top.txt"  // go tool pprof -top -nodecount=25
	fileProfCum = "prof-%s.cum.txt"  // go tool pprof -top -cum, every node
)

// The profiled runs, by what they explain.
const (
	profTiny     = "tiny-c1"
	profCls      = "cls-c4"
	profBatchOn  = "cls-c32-on"
	profBatchOff = "cls-c32-off"
)

// CPUUse is the CPU time around one profiled run.
type CPUUse struct {
	// WallS is the wall time of the svc bench run; ServerCPUS the server's
	// CPU time (all threads) during it and ServerCPUTotalS since the server
	// started; BenchCPUS svc bench's CPU time.
	WallS           float64 `json:"wall_s"`
	ServerCPUS      float64 `json:"server_cpu_s"`
	ServerCPUTotalS float64 `json:"server_cpu_total_s"`
	BenchCPUS       float64 `json:"bench_cpu_s"`
}

// LoadShare is svc bench's share of the CPU the two processes used.
func (c CPUUse) LoadShare() float64 {
	if c.BenchCPUS+c.ServerCPUS <= 0 {
		return 0
	}
	return c.BenchCPUS / (c.BenchCPUS + c.ServerCPUS)
}

// Profile is one profiled served run.
type Profile struct {
	Name string
	Run  bench.Report
	CPU  CPUUse
	// Top is the pprof -top output; Samples and Duration come from its
	// header; Cum and Flat map functions to seconds.
	Top               string
	Samples, Duration float64
	Cum, Flat         map[string]float64
}

// readProfile reads the files of profiled run name; nil when any is
// missing.
func readProfile(dir, name string) (*Profile, error) {
	p := &Profile{Name: name}
	for _, f := range []struct {
		file string
		v    any
	}{{fmt.Sprintf(fileProfRun, name), &p.Run}, {fmt.Sprintf(fileProfCPU, name), &p.CPU}} {
		ok, err := readJSON(dir, f.file, f.v)
		if err != nil || !ok {
			return nil, err
		}
	}
	top, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf(fileProfTop, name)))
	if err != nil {
		return nil, nil
	}
	cum, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf(fileProfCum, name)))
	if err != nil {
		return nil, nil
	}
	p.Top = string(top)
	if p.Samples, p.Duration, p.Cum, p.Flat, err = parsePprofTop(string(cum)); err != nil {
		return nil, fmt.Errorf("%s: %w", fmt.Sprintf(fileProfCum, name), err)
	}
	return p, nil
}

var pprofHeader = regexp.MustCompile(`Duration: (\S+), Total samples = (\S+)`)

// parsePprofTop reads go tool pprof -top output: the duration and total
// samples of the header, and each node's flat and cumulative time.
func parsePprofTop(s string) (samples, duration float64, cum, flat map[string]float64, err error) {
	cum, flat = map[string]float64{}, map[string]float64{}
	m := pprofHeader.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, nil, nil, fmt.Errorf("no \"Duration: …, Total samples = …\" line")
	}
	if duration, err = parsePprofValue(m[1]); err != nil {
		return 0, 0, nil, nil, err
	}
	if samples, err = parsePprofValue(m[2]); err != nil {
		return 0, 0, nil, nil, err
	}
	rows, err := pprofRows(s, func(f []string) error {
		fl, err1 := parsePprofValue(f[0])
		cu, err2 := parsePprofValue(f[3])
		if err1 != nil || err2 != nil {
			return nil
		}
		name := strings.TrimSuffix(strings.Join(f[5:], " "), " (inline)")
		// A function listed twice (inlined and not) adds up.
		cum[name] += cu
		flat[name] += fl
		return nil
	})
	if err != nil {
		return 0, 0, nil, nil, err
	}
	if !rows {
		return 0, 0, nil, nil, fmt.Errorf("no table of nodes")
	}
	return samples, duration, cum, flat, nil
}

// pprofRows calls row with the fields of each node line of go tool pprof
// -top output (flat, flat%, sum%, cum, cum%, then the name), and reports
// whether the table's header was found. row's error stops the scan.
func pprofRows(s string, row func(f []string) error) (bool, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	rows := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && f[0] == "flat" && f[1] == "flat%" {
			rows = true
			continue
		}
		if !rows || len(f) < 6 {
			continue
		}
		if err := row(f); err != nil {
			return rows, err
		}
	}
	return rows, sc.Err()
}

// pprofUnit is a suffix of a pprof value and what one of it is worth.
type pprofUnit struct {
	suffix string
	scale  float64
}

// Units of pprof's times (in seconds) and sizes (in bytes), each list
// with no suffix before a longer one it ends.
var (
	pprofTimes = []pprofUnit{{"mins", 60}, {"hrs", 3600}, {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1}}
	pprofSizes = []pprofUnit{{"kB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}, {"B", 1}}
)

// parsePprofValue parses a pprof time: 0, 250us, 10ms, 2.46s, 1.5mins.
func parsePprofValue(s string) (float64, error) { return parsePprofUnit(s, "value", pprofTimes) }

// parsePprofBytes parses a pprof size: 0, 512B, 1.50kB, 44.01MB, 1.2GB.
func parsePprofBytes(s string) (float64, error) { return parsePprofUnit(s, "size", pprofSizes) }

func parsePprofUnit(s, kind string, units []pprofUnit) (float64, error) {
	if s == "0" {
		return 0, nil
	}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("pprof %s %q: %w", kind, s, err)
			}
			return f * u.scale, nil
		}
	}
	return 0, fmt.Errorf("pprof %s %q: unknown unit", kind, s)
}

// Functions the breakdown looks up.
const (
	fnPredict  = "github.com/svc-dev/svc/core.(*Predictor).Predict"
	fnExternal = "runtime._ExternalCode"
	fnValidate = "github.com/svc-dev/svc/openapi.(*Validator).ValidateBody"
	fnConcat   = "github.com/svc-dev/svc/core.concat"
	fnSplit    = "github.com/svc-dev/svc/core.split"
	fnHandler  = "net/http.serverHandler.ServeHTTP"
	fnConn     = "net/http.(*conn).serve"
	fnSched    = "runtime.mcall"
	fnGC       = "runtime.gcBgMarkWorker"
	fnSyscall  = "internal/runtime/syscall/linux.Syscall6"
	fnFutex    = "runtime.futex"
)

// Functions the breakdown looks up that have had more than one import
// path: the /predict request decoding (core/tensor.DecodeRequest), the
// result encoding (core.(*Result).AppendJSON) and the HTTP handler (with
// its readBody) move from core/tensor, core and transport to transport/rest.
// Profiles from before and after the move classify alike.
var (
	// The v2 handler's parseRequest (JSON header and binary tensors) and
	// writeResponse stand in for decoding and encoding in a profile of the
	// Open Inference Protocol.
	fnDecode = moved{
		"github.com/svc-dev/svc/core/tensor.DecodeRequest",
		"github.com/svc-dev/svc/transport/rest.DecodeRequest",
		"github.com/svc-dev/svc/transport/rest.decodeRequest",
		"github.com/svc-dev/svc/transport/oip.parseRequest",
	}
	fnReadBody = moved{
		"github.com/svc-dev/svc/transport.readBody",
		"github.com/svc-dev/svc/transport/rest.readBody",
		"github.com/svc-dev/svc/transport.ReadBody",
	}
	// The access line: through the logger before, now straight to its
	// core (the current name first: with none sampled, it is shown).
	fnLog = moved{
		"github.com/svc-dev/svc/transport.accessLogger.write",
		"go.uber.org/zap.(*Logger).Info",
	}
	fnEncode = moved{
		"github.com/svc-dev/svc/core.(*Result).AppendJSON",
		"github.com/svc-dev/svc/transport/rest.appendResult",
		"github.com/svc-dev/svc/transport/oip.writeResponse",
	}
)

// modulePrefix is left out of the function names the report shows.
const modulePrefix = "github.com/svc-dev/svc/"

// moved is one function under each of the names (package path and
// function) it has had, the oldest first.
type moved []string

// lookup returns the function's cumulative time in cum and the name it was
// found under, without modulePrefix. The name with the most time wins: a
// profile has one of the names or, while the code moves, one name wrapping
// the other, whose time then counts once. With none sampled it is 0 and the
// first name.
func (m moved) lookup(cum map[string]float64) (seconds float64, name string) {
	best := m[0]
	for _, fn := range m[1:] {
		if cum[fn] > cum[best] {
			best = fn
		}
	}
	return cum[best], strings.TrimPrefix(best, modulePrefix)
}

// codecLabel names a decoding or encoding part by the protocol of the
// function found: the v1 JSON one or the Open Inference Protocol's.
func codecLabel(fn, v1, v2 string) string {
	if strings.HasPrefix(fn, "transport/oip.") {
		return v2
	}
	return v1
}

// Part is one slice of the server's CPU time.
type Part struct {
	Key, Name string
	Seconds   float64
}

// Part keys.
const (
	partInference = "inference"
	partDecode    = "decode"
	partValidate  = "validate"
	partReadBody  = "readbody"
	partEncode    = "encode"
	partMerge     = "merge"
	partLog       = "log"
	partHandler   = "handler"
	partHTTP      = "http"
	partSched     = "sched"
	partGC        = "gc"
	partOther     = "other"
	partUnsampled = "unsampled"
)

// Breakdown splits the server's CPU time into disjoint parts (seconds):
// subtrees of the profile's call graph, the rest of the handler and of the
// HTTP server around them, and what the profile did not sample. Total is
// the server's CPU time over its whole life (at least the samples).
func (p *Profile) Breakdown() (parts []Part, total float64) {
	c := func(fn string) float64 { return p.Cum[fn] }
	total = max(p.CPU.ServerCPUTotalS, p.Samples)
	decode, decodeFn := fnDecode.lookup(p.Cum)
	readBody, readBodyFn := fnReadBody.lookup(p.Cum)
	encode, encodeFn := fnEncode.lookup(p.Cum)
	logLine, logFn := fnLog.lookup(p.Cum)
	inHandler := []Part{
		{partInference, "inference: `core.(*Predictor).Predict` (ONNX Runtime through cgo) and ONNX Runtime's own threads (`runtime._ExternalCode`)", c(fnPredict) + c(fnExternal)},
		{partDecode, codecLabel(decodeFn, "JSON → tensors", "v2 request (JSON header, binary tensors) → tensors") + ": `" + decodeFn + "`", decode},
		{partValidate, "request validation: `openapi.(*Validator).ValidateBody`", c(fnValidate)},
		{partReadBody, "reading the request body: `" + readBodyFn + "`", readBody},
		{partEncode, codecLabel(encodeFn, "tensors → JSON", "writing the v2 answer") + ": `" + encodeFn + "`", encode},
		{partMerge, "batching, merging and splitting: `core.concat`, `core.split`", c(fnConcat) + c(fnSplit)},
		{partLog, "access log: `" + logFn + "`", logLine},
	}
	rest := c(fnHandler)
	for _, q := range inHandler {
		if q.Key != partInference {
			rest -= q.Seconds
		}
	}
	rest -= c(fnPredict)
	parts = append(parts, inHandler...)
	parts = append(parts,
		Part{partHandler, "rest of the /predict handler (routing, headers, batcher bookkeeping, waiting)", max(rest, 0)},
		Part{partHTTP, "HTTP server outside the handler (reading requests, writing answers, connections): `net/http.(*conn).serve` minus the handler", max(c(fnConn)-c(fnHandler), 0)},
		Part{partSched, "Go scheduler (finding work, waking and parking threads): `runtime.mcall`", c(fnSched)},
		Part{partGC, "garbage collector, background: `runtime.gcBgMarkWorker`", c(fnGC)},
	)
	sum := 0.0
	for _, q := range parts {
		sum += q.Seconds
	}
	parts = append(parts,
		Part{partOther, "everything else sampled (start-up, signals, the runtime)", max(p.Samples-sum, 0)},
		Part{partUnsampled, "not in the profile: CPU time of the process the Go profiler did not sample", max(total-p.Samples, 0)},
	)
	return parts, total
}

// share returns the part's share of total.
func share(parts []Part, total float64, key string) float64 {
	for _, q := range parts {
		if q.Key == key && total > 0 {
			return q.Seconds / total
		}
	}
	return 0
}

// requests is the number of /predict requests of the run (the measured
// ones and svc bench's probes).
func (p *Profile) requests() int64 {
	n := int64(p.Run.Settings.Bodies)
	for _, l := range p.Run.Served {
		n += l.Requests + l.Errors
	}
	return n
}

// writeProfile writes the CPU split table and the trimmed pprof -top.
func writeProfile(w io.Writer, p *Profile, title string) {
	parts, total := p.Breakdown()
	l := bench.Best(p.Run.Served)
	fmt.Fprintf(w, "**Profile: %s.** ", title)
	if l != nil {
		fmt.Fprintf(w, "`svc serve` with `SVC_CPUPROFILE`, loaded by `svc bench --url` at concurrency %d for %s (%d requests, %s/s, p50 %s). ",
			l.Concurrency, fmtSeconds(p.Run.Settings.DurationS), l.Requests, fmtRPS(l.ThroughputRPS), bench.FormatMicros(l.LatencyUS.P50))
	}
	fmt.Fprintf(w, "Over the run the server used %.2f s of CPU and svc bench %.2f s: **the load generator took %.0f %% of the CPU the two used**",
		p.CPU.ServerCPUS, p.CPU.BenchCPUS, p.CPU.LoadShare()*100)
	if p.CPU.WallS > 0 && p.Run.Machine.CPUs > 0 {
		fmt.Fprintf(w, ", which together is %.0f %% of the %d cores for %.1f s",
			100*(p.CPU.ServerCPUS+p.CPU.BenchCPUS)/(p.CPU.WallS*float64(p.Run.Machine.CPUs)), p.Run.Machine.CPUs, p.CPU.WallS)
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintf(w, "| where the server's CPU went (%.2f s over its life, %.2f s sampled) | s | share |\n", total, p.Samples)
	fmt.Fprintln(w, "|---|--:|--:|")
	for _, q := range parts {
		fmt.Fprintf(w, "| %s | %.2f | %.1f %% |\n", q.Name, q.Seconds, 100*q.Seconds/max(total, 1e-9))
	}
	fmt.Fprintf(w, "| of all the above, in system calls (`%s`: network reads and writes, the log) | %.2f | %.1f %% |\n", fnSyscall, p.Cum[fnSyscall], 100*p.Cum[fnSyscall]/max(total, 1e-9))
	fmt.Fprintf(w, "| of all the above, in futex calls (`%s`: threads sleeping and waking each other) | %.2f | %.1f %% |\n", fnFutex, p.Cum[fnFutex], 100*p.Cum[fnFutex]/max(total, 1e-9))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "`go tool pprof -top -nodecount=25 build/artifacts/bench/prof-%s.prof` (flat = in the function itself, cum = with what it calls):\n\n", p.Name)
	fmt.Fprintln(w, "```")
	fmt.Fprintln(w, trimTop(p.Top))
	fmt.Fprintln(w, "```")
	fmt.Fprintln(w)
}

// trimTop drops the lines of pprof -top that change on every build
// (binary name, build ID, time).
func trimTop(s string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.HasPrefix(line, "File: ") || strings.HasPrefix(line, "Build ID: ") || strings.HasPrefix(line, "Time: ") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
