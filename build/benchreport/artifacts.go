package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The file formats make bench leaves in its artifacts directory. They are
// read with types of their own: the report is a separate module and
// depends on the formats only, not on the code that writes them.

// Report is what `svc bench --json` prints (the fields the tables use).
type Report struct {
	Model struct {
		Name string `json:"name"`
	} `json:"model"`
	Settings struct {
		DurationS float64 `json:"duration_s"`
		Bodies    int     `json:"bodies"`
		BodyBytes int     `json:"body_bytes"`
		Protocol  string  `json:"protocol"`
	} `json:"settings"`
	Machine  Machine `json:"machine"`
	Served   []Level `json:"served"`
	Raw      []Level `json:"raw"`
	RawCodec []Level `json:"raw_codec"`
}

// Machine is where svc bench ran.
type Machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Go       string `json:"go"`
}

// Level is one concurrency level of one mode.
type Level struct {
	Concurrency   int     `json:"concurrency"`
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	ThroughputRPS float64 `json:"throughput_rps"`
	LatencyUS     Latency `json:"latency_us"`
}

// Latency holds latencies in µs.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// level returns the level at concurrency c, nil when there is none.
func level(ls []Level, c int) *Level {
	for i := range ls {
		if ls[i].Concurrency == c {
			return &ls[i]
		}
	}
	return nil
}

// ok reports whether l ran and answered at least one request.
func (l *Level) ok() bool { return l != nil && l.Requests > l.Errors }

// first is the report's first served level (the --url runs measure one).
func (r *Report) first() *Level {
	if r == nil || len(r.Served) == 0 {
		return nil
	}
	return &r.Served[0]
}

// protocol is the API the served requests went through ("" was v1).
func (r *Report) protocol() string {
	if r.Settings.Protocol == "" {
		return "v1"
	}
	return r.Settings.Protocol
}

// RawBench is the result lines of BenchmarkRaw (package
// cmd/internal/bench, go test -bench): ONNX Runtime in process, one line
// per mode and repetition.
type RawBench struct {
	Runs []RawRun
}

// RawRun is one mode in one repetition: a batch size on the one session,
// or (Sessions > 0) that many sessions of Threads intra-op threads each
// at batch 1.
type RawRun struct {
	// Rep counts the mode's lines: its k-th line is repetition k.
	Rep      int
	Batch    int64
	Sessions int
	Threads  int
	RowsPerS float64
}

// rawBenchName is BenchmarkRaw's sub-benchmark name: its mode, and the
// GOMAXPROCS suffix go test adds when it is not 1.
var rawBenchName = regexp.MustCompile(`^BenchmarkRaw/(?:batch=([0-9]+)|sessions=([0-9]+)x([0-9]+))(?:-[0-9]+)?$`)

// parseRawBench reads BenchmarkRaw's result lines out of go test -bench
// output (one run's or several appended); the other lines are skipped.
// The k-th line of a mode is its repetition k, as make bench runs the
// test binary once per repetition and as -count repeats a mode.
func parseRawBench(s string) (*RawBench, error) {
	r := &RawBench{}
	reps := map[RawRun]int{} // lines so far by mode (a RawRun with only its mode set)
	for _, b := range parseGoBench(s) {
		m := rawBenchName.FindStringSubmatch(b.name)
		if m == nil {
			continue
		}
		rows, err := strconv.ParseFloat(b.metrics["rows/s"], 64)
		if err != nil || rows < 0 {
			return nil, fmt.Errorf("%s: no rows/s (%q)", b.name, b.metrics["rows/s"])
		}
		run := RawRun{Batch: 1}
		if m[1] != "" {
			run.Batch, err = strconv.ParseInt(m[1], 10, 64)
		} else {
			run.Sessions, err = strconv.Atoi(m[2])
			if err == nil {
				run.Threads, err = strconv.Atoi(m[3])
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		reps[run]++
		run.Rep, run.RowsPerS = reps[run], rows
		r.Runs = append(r.Runs, run)
	}
	if len(r.Runs) == 0 {
		return nil, errors.New("no BenchmarkRaw result line")
	}
	return r, nil
}

// Wrk is what build/bench-wrk.lua writes when a wrk run ends.
type Wrk struct {
	Requests   int64 `json:"requests"`
	DurationUS int64 `json:"duration_us"`
	Non200     int64 `json:"non200"`
	Errors     struct {
		Connect int64 `json:"connect"`
		Read    int64 `json:"read"`
		Write   int64 `json:"write"`
		Timeout int64 `json:"timeout"`
	} `json:"errors"`
	LatencyUS Latency `json:"latency_us"`
	// MeasuredUS is the script's own timing of each request, without
	// wrk's correction for coordinated omission (WRK_LATENCY=1).
	MeasuredUS *Latency `json:"measured_us"`
}

// Failed counts the requests that did not get a 200.
func (w *Wrk) Failed() int64 {
	return w.Non200 + w.Errors.Connect + w.Errors.Read + w.Errors.Write + w.Errors.Timeout
}

// RPS is the 200 answers per second.
func (w *Wrk) RPS() float64 {
	if w.DurationUS <= 0 {
		return 0
	}
	return float64(w.Requests-w.Non200) / (float64(w.DurationUS) / 1e6)
}

// LoadCPU is the CPU time the server and the load generator used over one
// load run (bench-lib.sh's with_cpu).
type LoadCPU struct {
	WallS      float64 `json:"wall_s"`
	ServerCPUS float64 `json:"server_cpu_s"`
	ClientCPUS float64 `json:"client_cpu_s"`
}

// ProfileCPU is the CPU time around one profiled run (build/bench.sh's
// profile_run): the server's during the run and over its life, svc
// bench's during the run.
type ProfileCPU struct {
	WallS           float64 `json:"wall_s"`
	ServerCPUS      float64 `json:"server_cpu_s"`
	ServerCPUTotalS float64 `json:"server_cpu_total_s"`
	BenchCPUS       float64 `json:"bench_cpu_s"`
}

// Sched is the change over a run of the sums of the server's threads'
// /proc/PID/task/TID/schedstat (build/bench-tail.sh).
type Sched struct {
	WaitS   float64 `json:"wait_s"`
	Slices  int64   `json:"slices"`
	Threads int     `json:"threads"`
}

// RSSCheck is memory.json: VmRSS after the two runs of the memory check.
type RSSCheck struct {
	KiB1 int64 `json:"rss_kib_1"`
	KiB2 int64 `json:"rss_kib_2"`
}

// TypeRSS is mem-type-T.rss.json (build/bench-memory.sh).
type TypeRSS struct {
	Type        string `json:"type"`
	Elements    int64  `json:"elements"`
	Concurrency int    `json:"concurrency"`
	IdleKiB     int64  `json:"idle_kib"`
	PeakKiB     int64  `json:"peak_kib"`
}

// InflightRSS is mem-inflight.rss.json (build/bench-memory.sh).
type InflightRSS struct {
	Batch       int     `json:"batch"`
	Concurrency int     `json:"concurrency"`
	IdleKiB     int64   `json:"idle_kib"`
	PeakKiB     int64   `json:"peak_kib"`
	EndKiB      int64   `json:"end_kib"`
	AfterKiB    []int64 `json:"after_kib"`
	Env         string  `json:"env"`
}

// artifacts is make bench's artifacts directory.
type artifacts struct {
	dir   string
	names []string // the files in it, sorted
}

func openArtifacts(dir string) (*artifacts, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	a := &artifacts{dir: dir}
	for _, e := range ents {
		if !e.IsDir() {
			a.names = append(a.names, e.Name())
		}
	}
	return a, nil
}

// json decodes the file name into v; a missing file gives (false, nil).
func (a *artifacts) json(name string, v any) (bool, error) {
	b, err := os.ReadFile(filepath.Join(a.dir, name))
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

// rawBench reads BenchmarkRaw's result lines from the file name; nil when
// it is missing.
func (a *artifacts) rawBench(name string) (*RawBench, error) {
	b, err := os.ReadFile(filepath.Join(a.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := parseRawBench(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// optional decodes the file name into a new T; nil when it is missing.
func optional[T any](a *artifacts, name string) (*T, error) {
	v := new(T)
	ok, err := a.json(name, v)
	if !ok {
		return nil, err
	}
	return v, nil
}

// text is the file name without its trailing newlines; "" when missing.
func (a *artifacts) text(name string) string {
	b, err := os.ReadFile(filepath.Join(a.dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}

// match returns the submatches of re for every file name it matches, in
// name order.
func (a *artifacts) match(re *regexp.Regexp) [][]string {
	var out [][]string
	for _, n := range a.names {
		if m := re.FindStringSubmatch(n); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// ordered returns keys with those in first leading, in first's order, and
// the others after them, sorted.
func ordered(keys []string, first []string) []string {
	var out, rest []string
	for _, k := range first {
		if slices.Contains(keys, k) {
			out = append(out, k)
		}
	}
	for _, k := range keys {
		if !slices.Contains(first, k) && !slices.Contains(rest, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// keyed collects values by key (a model, a variant, an element type) as
// the files come, and gives them back in table order.
type keyed[T any] struct {
	m    map[string]*T
	keys []string
}

// at returns key's value, made by mk the first time.
func (k *keyed[T]) at(key string, mk func() T) *T {
	if v, ok := k.m[key]; ok {
		return v
	}
	if k.m == nil {
		k.m = map[string]*T{}
	}
	v := new(T)
	*v = mk()
	k.m[key], k.keys = v, append(k.keys, key)
	return v
}

// in returns the values, those whose keys are in first leading in first's
// order, the others after them by key.
func (k *keyed[T]) in(first []string) []T {
	var out []T
	for _, key := range ordered(k.keys, first) {
		out = append(out, *k.m[key])
	}
	return out
}
