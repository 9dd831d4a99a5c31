// Command benchreport writes BENCHMARKS.md from what build/bench.sh (make bench)
// leaves in its artifacts directory: the Go benchmark output, the svc bench
// JSON reports and tables of the tiny model and PaddleOCR cls, the memory
// check, the batching and session tuning runs, the in-process batch runs
// (rawbatch), the CPU profiles, the commands and the run's environment. It
// checks the targets against the JSON and, under each missed one, says by
// how much and why, with the profile.
//
//	go run ./cmd/benchreport -dir build/artifacts/bench -out BENCHMARKS.md
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// Files read from the artifacts directory.
const (
	fileGoBench  = "go-bench.txt"
	fileTiny     = "tiny.json"
	fileCls      = "cls.json"
	fileMemory   = "memory.json"
	fileMemory1  = "memory-1.json"
	fileMemory2  = "memory-2.json"
	fileCommands = "commands.txt"
	fileEnv      = "env.txt"
)

// Targets.
const (
	tinyP50BudgetUS  = 150.0
	clsMinShare      = 0.80
	memoryMaxGrowth  = 0.10
	tinyModelPath    = "testdata/models/classifier.onnx"
	clsModelPath     = "build/models/paddleocr-cls"
	clsModelShapeArg = "x=1,3,48,192"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	dir := fs.String("dir", "build/artifacts/bench", "artifacts directory of build/bench.sh")
	out := fs.String("out", "", "file to write (default: stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := write(&buf, *dir); err != nil {
		return err
	}
	if *out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	// Sections other tools own (<!-- NAME:begin --> … <!-- NAME:end -->)
	// survive the rewrite.
	old, err := os.ReadFile(*out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(*out, preserveSections(old, buf.Bytes()), 0o644)
}

// Memory is the memory check: the server's VmRSS (memory.json, written by
// build/bench.sh) after the /predict requests of two svc bench --url runs
// (memory-1.json, memory-2.json), counted cumulatively.
type Memory struct {
	RSSKiB1   int64 `json:"rss_kib_1"`
	RSSKiB2   int64 `json:"rss_kib_2"`
	Requests1 int64 `json:"-"`
	Requests2 int64 `json:"-"`
	Errors    int64 `json:"-"`
}

// readMemory reads the memory check; ok is false when it did not run.
func readMemory(dir string) (Memory, bool, error) {
	var m Memory
	var r1, r2 bench.Report
	for _, f := range []struct {
		name string
		v    any
	}{{fileMemory, &m}, {fileMemory1, &r1}, {fileMemory2, &r2}} {
		ok, err := readJSON(dir, f.name, f.v)
		if err != nil || !ok {
			return m, false, err
		}
	}
	// Every svc bench run also sends each body once as a probe.
	count := func(r bench.Report) (n, errs int64) {
		n = int64(r.Settings.Bodies)
		for _, l := range r.Served {
			n += l.Requests
			errs += l.Errors
		}
		return n, errs
	}
	n1, e1 := count(r1)
	n2, e2 := count(r2)
	m.Requests1, m.Requests2, m.Errors = n1, n1+n2, e1+e2
	return m, true, nil
}

// Target is one checked goal.
type Target struct {
	// Key names the target for its explanation when missed.
	Key      string
	Goal     string
	Measured string
	// Miss says by how much a missed target was missed.
	Miss string
	// Met is nil when the target could not be checked.
	Met *bool
}

func (t Target) result() string {
	switch {
	case t.Met == nil:
		return "not checked"
	case *t.Met:
		return "**met**"
	}
	return "**missed**"
}

func met(b bool) *bool { return &b }

// Targets checks the goals; a nil report or memory check leaves its
// target unchecked.
func Targets(tiny, cls *bench.Report, mem *Memory) []Target {
	t1 := Target{Key: "tiny-p50", Goal: fmt.Sprintf("tiny model, concurrency 1: p50(/predict) − p50(raw) ≤ %.0f µs", tinyP50BudgetUS), Measured: "not measured"}
	if tiny != nil {
		s, r := level(tiny.Served, 1), level(tiny.Raw, 1)
		if s != nil && r != nil && s.Errors == 0 {
			d := s.LatencyUS.P50 - r.LatencyUS.P50
			t1.Measured = fmt.Sprintf("%.1f µs (served p50 %.1f µs, raw p50 %.1f µs)", d, s.LatencyUS.P50, r.LatencyUS.P50)
			t1.Met = met(d <= tinyP50BudgetUS)
			if d > tinyP50BudgetUS {
				t1.Miss = fmt.Sprintf("%.1f µs (%.0f %% over the %.0f µs budget)", d-tinyP50BudgetUS, 100*(d/tinyP50BudgetUS-1), tinyP50BudgetUS)
			}
		} else if s != nil && s.Errors > 0 {
			t1.Measured = fmt.Sprintf("served had %d errors", s.Errors)
			t1.Met = met(false)
		}
	}
	t2 := Target{Key: "cls-share", Goal: fmt.Sprintf("PaddleOCR cls: best served throughput ≥ %.0f %% of best raw+codec throughput", clsMinShare*100), Measured: "not measured"}
	if cls != nil {
		s, c := bench.Best(cls.Served), bench.Best(cls.RawCodec)
		if s != nil && c != nil && c.ThroughputRPS > 0 {
			share := s.ThroughputRPS / c.ThroughputRPS
			t2.Measured = fmt.Sprintf("%.0f %% (served %.1f/s at concurrency %d, raw+codec %.1f/s at concurrency %d)",
				share*100, s.ThroughputRPS, s.Concurrency, c.ThroughputRPS, c.Concurrency)
			t2.Met = met(share >= clsMinShare && errorsIn(cls.Served) == 0)
			if share < clsMinShare {
				t2.Miss = fmt.Sprintf("%.0f percentage points: %.1f/s served against the %.1f/s (%.0f %% of raw+codec) needed", 100*(clsMinShare-share), s.ThroughputRPS, clsMinShare*c.ThroughputRPS, clsMinShare*100)
			}
			if n := errorsIn(cls.Served); n > 0 {
				t2.Measured += fmt.Sprintf("; served had %d errors", n)
			}
		}
	}
	t3 := Target{Key: "memory", Goal: fmt.Sprintf("tiny model: server RSS after ~20,000 requests within %.0f %% of RSS after ~2,000", memoryMaxGrowth*100), Measured: "not measured"}
	if mem != nil && mem.RSSKiB1 > 0 && mem.RSSKiB2 > 0 {
		growth := float64(mem.RSSKiB2-mem.RSSKiB1) / float64(mem.RSSKiB1)
		t3.Measured = fmt.Sprintf("%s after %d requests, %s after %d (%+.1f %%)",
			mib(mem.RSSKiB1), mem.Requests1, mib(mem.RSSKiB2), mem.Requests2, growth*100)
		t3.Met = met(growth <= memoryMaxGrowth && growth >= -memoryMaxGrowth && mem.Errors == 0)
		if growth > memoryMaxGrowth || growth < -memoryMaxGrowth {
			t3.Miss = fmt.Sprintf("%.1f percentage points (%+.1f %% against ±%.0f %%)", 100*(abs(growth)-memoryMaxGrowth), growth*100, memoryMaxGrowth*100)
		}
		if mem.Errors > 0 {
			t3.Measured += fmt.Sprintf("; %d errors", mem.Errors)
		}
	}
	return []Target{t1, t2, t3}
}

func level(ls []bench.Level, c int) *bench.Level {
	for i := range ls {
		if ls[i].Concurrency == c {
			return &ls[i]
		}
	}
	return nil
}

func errorsIn(ls []bench.Level) int64 {
	var n int64
	for _, l := range ls {
		n += l.Errors
	}
	return n
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// readJSON decodes dir/name into v; a missing file gives (false, nil).
func readJSON(dir, name string, v any) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

// readOptional reads dir/name as JSON into a new T; nil when the file is
// not there.
func readOptional[T any](dir, name string) (*T, error) {
	v := new(T)
	ok, err := readJSON(dir, name, v)
	if !ok {
		return nil, err
	}
	return v, nil
}

func readText(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}

// readData reads everything build/bench.sh leaves; what is missing stays
// nil.
func readData(dir string) (Data, error) {
	d := Data{Profiles: map[string]*Profile{}}
	for _, f := range []struct {
		name string
		dst  **bench.Report
	}{{fileTiny, &d.Tiny}, {fileCls, &d.Cls}} {
		var r bench.Report
		ok, err := readJSON(dir, f.name, &r)
		if err != nil {
			return d, err
		}
		if ok {
			*f.dst = &r
		}
	}
	mem, ok, err := readMemory(dir)
	if err != nil {
		return d, err
	}
	if ok {
		d.Mem = &mem
	}
	if d.Tune, err = readTuning(dir); err != nil {
		return d, err
	}
	if d.Raw, err = readRawBatch(dir); err != nil {
		return d, err
	}
	if d.Protocols, err = readProtocols(dir); err != nil {
		return d, err
	}
	if d.Served, err = readServed(dir); err != nil {
		return d, err
	}
	if d.MemLoad, err = readMemLoad(dir); err != nil {
		return d, err
	}
	if d.Tail, err = readTail(dir); err != nil {
		return d, err
	}
	if d.Pinned, err = readPinned(dir); err != nil {
		return d, err
	}
	for _, name := range []string{profTiny, profCls, profBatchOn, profBatchOff, profCls16, profDet16, profClsBin16, profDetBin16, profLogOn, profLogOff} {
		p, err := readProfile(dir, name)
		if err != nil {
			return d, err
		}
		if p != nil {
			d.Profiles[name] = p
		}
	}
	return d, nil
}

// AllTargets checks every goal, in the order.
func AllTargets(d Data) []Target {
	base := Targets(d.Tiny, d.Cls, d.Mem)
	out := append([]Target{}, base[:2]...)
	out = append(out, BatchingTargets(d.Tune, d.Raw)...)
	out = append(out, ProtocolTargets(d.Protocols)...)
	out = append(out, ServedTargets(d.Served)...)
	out = append(out, PerfTargets(d)...)
	out = append(out, base[2:]...)
	return append(out, MemLoadTargets(d.MemLoad)...)
}

// write renders BENCHMARKS.md.
func write(w *bytes.Buffer, dir string) error {
	d, err := readData(dir)
	if err != nil {
		return err
	}
	env := parseEnv(readText(dir, fileEnv))
	var machine bench.Machine
	switch {
	case d.Tiny != nil:
		machine = d.Tiny.Machine
	case d.Cls != nil:
		machine = d.Cls.Machine
	case len(d.Tune["default"]) > 0:
		machine = d.Tune["default"][0].Machine
	}
	if machine.CPUs == 0 {
		for _, m := range d.Served {
			if m.Raw != nil {
				machine.CPUs = m.Raw.Machine.CPUs
			}
		}
	}

	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Written by `make bench` (`build/bench.sh`, then `go run ./cmd/benchreport`)")
	if env["date"] != "" {
		fmt.Fprintf(w, " on %s", env["date"])
	}
	if env["commit"] != "" {
		fmt.Fprintf(w, " at commit `%s`", env["commit"])
	}
	if env["elapsed_s"] != "" {
		fmt.Fprintf(w, "; the measurements took %s s", env["elapsed_s"])
	}
	fmt.Fprintln(w, ". Run `make bench` again to refresh it; the raw JSON, the profiles and the tables are in `build/artifacts/bench/`, the commands at the end.")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Machine")
	fmt.Fprintln(w)
	cpu := machine.CPUModel
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(w, "- CPU: %s, %d cores. **The load generator shares them with the server**: in the served runs svc bench's clients take part of the same cores as the server; the in-process runs (raw, raw+codec, rawbatch) have them to themselves.", cpu, machine.CPUs)
	if lo, hi, ok := loadShareRange(d.Profiles); ok {
		r := fmt.Sprintf("%.0f–%.0f", lo*100, hi*100)
		if fmt.Sprintf("%.0f", lo*100) == fmt.Sprintf("%.0f", hi*100) {
			r = fmt.Sprintf("%.0f", lo*100)
		}
		fmt.Fprintf(w, " Measured in the profiled runs, svc bench took %s %% of the CPU the server and it used together.", r)
	}
	fmt.Fprintln(w)
	if machine.OS != "" {
		fmt.Fprintf(w, "- %s/%s, %s", machine.OS, machine.Arch, machine.Go)
		if env["svc"] != "" {
			fmt.Fprintf(w, "; %s", env["svc"])
		}
		if env["onnxruntime"] != "" {
			fmt.Fprintf(w, "; %s", env["onnxruntime"])
		}
		fmt.Fprintln(w)
	}
	if env["load_before"] != "" {
		fmt.Fprintf(w, "- Load average (1, 5, 15 min) before the run: %s; after: %s. Anything else running on the machine shows up in these numbers.\n", env["load_before"], env["load_after"])
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | result |")
	fmt.Fprintln(w, "|---|---|---|")
	targets := AllTargets(d)
	for _, t := range targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Goal, t.Measured, t.result())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "p50 latencies are from HDR histograms (three significant digits); throughput counts successful requests per second of the measured phase. The tiny-model and cls rows come from one sweep each; the batching rows pair the runs of the same round (batching on and off, batch 8 and batch 1) and take the median over the rounds (sections below).")
	fmt.Fprintln(w)

	writeWhy(w, targets, d)
	writeBatching(w, d.Tune, d.Raw)
	writeTuning(w, d.Tune)

	section := func(title string, r *bench.Report, status string) {
		fmt.Fprintf(w, "## %s\n\n", title)
		var text bytes.Buffer
		if r == nil || r.WriteTable(&text) != nil {
			fmt.Fprintf(w, "Not measured")
			if status != "" && status != "0" {
				fmt.Fprintf(w, " (svc bench exited with status %s)", status)
			}
			fmt.Fprintln(w, ".")
			fmt.Fprintln(w)
			return
		}
		fmt.Fprintln(w, "```")
		fmt.Fprint(w, text.String())
		fmt.Fprintln(w, "```")
		fmt.Fprintln(w)
		if b, raw, c := bench.Best(r.Served), bench.Best(r.Raw), bench.Best(r.RawCodec); b != nil && raw != nil && c != nil {
			fmt.Fprintf(w, "Best served throughput %.1f/s (concurrency %d); best raw %.1f/s (concurrency %d); best raw+codec %.1f/s (concurrency %d).\n\n",
				b.ThroughputRPS, b.Concurrency, raw.ThroughputRPS, raw.Concurrency, c.ThroughputRPS, c.Concurrency)
		}
	}
	section("svc bench: tiny model ("+tinyModelPath+")", d.Tiny, env["tiny_status"])
	section("svc bench: PaddleOCR cls ("+clsModelPath+", input "+clsModelShapeArg+")", d.Cls, env["cls_status"])
	writeProtocols(w, d.Protocols)
	writeServed(w, d.Served, machine.CPUs)
	writePinned(w, d.Pinned)
	writeBaselineRatios(w, d)
	writeTail(w, d.Tail)

	fmt.Fprintln(w, "## Memory")
	fmt.Fprintln(w)
	if d.Mem != nil {
		fmt.Fprintf(w, "`svc serve %s` on 127.0.0.1, loaded by `svc bench --url … --concurrency 4 --warmup 0s --no-raw`: ", tinyModelPath)
		fmt.Fprintf(w, "VmRSS from `/proc/<pid>/status` was %s after %d /predict requests and %s after %d (the counts include svc bench's probe requests).\n",
			mib(d.Mem.RSSKiB1), d.Mem.Requests1, mib(d.Mem.RSSKiB2), d.Mem.Requests2)
	} else {
		fmt.Fprintln(w, "Not measured.")
	}
	fmt.Fprintln(w)
	writeMemLoad(w, d.MemLoad)

	fmt.Fprintln(w, "## Go benchmarks")
	fmt.Fprintln(w)
	goBench := readText(dir, fileGoBench)
	if rows := parseGoBench(goBench); len(rows) > 0 {
		writeGoBench(w, rows)
	} else {
		fmt.Fprintln(w, "No benchmark results.")
	}
	if status := env["go_bench_status"]; status != "" && status != "0" {
		fmt.Fprintf(w, "\n`go test -bench` exited with status %s; see `build/artifacts/bench/%s`.\n", status, fileGoBench)
	}

	var failedSteps []string
	for _, k := range []string{"protocols", "served", "memory_load", "tune", "rawbatch", "profiles", "tail"} {
		if status := env[k+"_status"]; status != "" && status != "0" {
			failedSteps = append(failedSteps, fmt.Sprintf("%s (status %s)", k, status))
		}
	}
	if len(failedSteps) > 0 {
		fmt.Fprintf(w, "\nSteps that failed: %s; see the logs in `build/artifacts/bench/`.\n", strings.Join(failedSteps, ", "))
	}

	if cmds := readText(dir, fileCommands); cmds != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "## Commands")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "```sh")
		fmt.Fprintln(w, cmds)
		fmt.Fprintln(w, "```")
	}
	return nil
}

// loadShareRange is the smallest and largest share of the CPU svc bench
// took in the profiled runs.
func loadShareRange(ps map[string]*Profile) (lo, hi float64, ok bool) {
	for _, p := range ps {
		s := p.CPU.LoadShare()
		if !ok || s < lo {
			lo = s
		}
		if !ok || s > hi {
			hi = s
		}
		ok = true
	}
	return lo, hi, ok
}

// parseEnv reads "key: value" lines.
func parseEnv(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// goBench is one line of go test -bench output.
type goBench struct {
	Pkg, Name string
	N         int64
	Metrics   []metric
}

type metric struct {
	Value string
	Unit  string
}

// parseGoBench reads the result lines of go test -bench -benchmem.
func parseGoBench(s string) []goBench {
	var out []goBench
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := goBench{Pkg: pkg, Name: f[0], N: n}
		for i := 2; i+1 < len(f); i += 2 {
			b.Metrics = append(b.Metrics, metric{Value: f[i], Unit: f[i+1]})
		}
		out = append(out, b)
	}
	return out
}

func writeGoBench(w io.Writer, rows []goBench) {
	fmt.Fprintln(w, "| package | benchmark | ns/op | MB/s | B/op | allocs/op | other |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|---|")
	for _, r := range rows {
		cols := map[string]string{}
		var other []string
		for _, m := range r.Metrics {
			switch m.Unit {
			case "ns/op", "MB/s", "B/op", "allocs/op":
				cols[m.Unit] = m.Value
			default:
				other = append(other, m.Value+" "+m.Unit)
			}
		}
		pkg := strings.TrimPrefix(r.Pkg, "github.com/svc-dev/svc/")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", pkg, r.Name, cols["ns/op"], cols["MB/s"], cols["B/op"], cols["allocs/op"], strings.Join(other, ", "))
	}
}
