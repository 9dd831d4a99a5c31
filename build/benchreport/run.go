package main

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Files of the whole run (build/bench.sh).
const (
	fileEnv      = "env.txt"      // key: value lines
	fileCommands = "commands.txt" // the commands, as they ran
	fileGoBench  = "go-bench.txt" // go test -bench -benchmem
	// fileRawBatch is BenchmarkRaw's lines at batch 1, 8 and 32 on
	// PaddleOCR cls.
	fileRawBatch = "raw-batch.txt"
)

var jsonFile = regexp.MustCompile(`^.*\.json$`)

func loadRun(a *artifacts, d *data) error {
	d.envText = a.text(fileEnv)
	d.env = parseEnv(d.envText)
	d.commands = a.text(fileCommands)
	d.goBench = a.text(fileGoBench)
	// The machine, as svc bench saw it: the report that saw the most
	// CPUs (one pinned to a CPU with taskset sees one).
	for _, m := range a.match(jsonFile) {
		var r Report
		if _, err := a.json(m[0], &r); err != nil {
			return err
		}
		if r.Machine.OS != "" && r.Machine.CPUs > d.machine.CPUs {
			d.machine = r.Machine
		}
	}
	return nil
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

func writeRun(w *doc, d *data) {
	t := newTable(2, "run", "")
	add := func(name, value string) {
		if value != "" {
			t.row(name, value)
		}
	}
	add("date", d.env["date"])
	add("commit", d.env["commit"])
	if s := d.env["elapsed_s"]; s != "" {
		add("measurements took", s+" s")
	}
	if m := d.machine; m.CPUs > 0 {
		add("CPU", fmt.Sprintf("%s, %d cores, shared by the server and the load generator", m.CPUModel, m.CPUs))
		add("OS, Go", fmt.Sprintf("%s/%s, %s", m.OS, m.Arch, m.Go))
	}
	add("svc", d.env["svc"])
	add("ONNX Runtime", d.env["onnxruntime"])
	add("load average before (1, 5, 15 min)", d.env["load_before"])
	add("load average after", d.env["load_after"])
	add("rounds of the tuning runs", d.env["reps"])
	if len(t.rows) > 0 {
		add("steps that failed", failedSteps(d.envText))
	}
	w.section("Run", t)
}

// failedSteps lists the steps whose NAME_status line in env.txt is not 0,
// in their order.
func failedSteps(env string) string {
	var failed []string
	for _, line := range strings.Split(env, "\n") {
		k, v, _ := strings.Cut(line, ":")
		name, ok := strings.CutSuffix(strings.TrimSpace(k), "_status")
		if v = strings.TrimSpace(v); ok && v != "0" {
			failed = append(failed, fmt.Sprintf("%s (status %s)", name, v))
		}
	}
	if len(failed) == 0 {
		return "none"
	}
	return strings.Join(failed, ", ")
}

func writeCommands(w *doc, d *data) {
	if d.commands == "" {
		return
	}
	w.heading("Commands")
	fmt.Fprintf(w, "```sh\n%s\n```\n", d.commands)
}

// goBench is one result line of go test -bench -benchmem.
type goBench struct {
	pkg, name string
	metrics   map[string]string // by unit, every unit
	other     []string          // "VALUE UNIT" of the units beside ns/op, MB/s, B/op and allocs/op
}

// parseGoBench reads the result lines of go test -bench output.
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
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		b := goBench{pkg: pkg, name: f[0], metrics: map[string]string{}}
		for i := 2; i+1 < len(f); i += 2 {
			unit := f[i+1]
			b.metrics[unit] = f[i]
			switch unit {
			case "ns/op", "MB/s", "B/op", "allocs/op":
			default:
				b.other = append(b.other, f[i]+" "+unit)
			}
		}
		out = append(out, b)
	}
	return out
}

func writeGoBench(w *doc, d *data) {
	t := newTable(2, "package", "benchmark", "ns/op", "MB/s", "B/op", "allocs/op", "other")
	for _, b := range parseGoBench(d.goBench) {
		t.row(b.pkg, b.name, b.metrics["ns/op"], b.metrics["MB/s"], b.metrics["B/op"], b.metrics["allocs/op"], strings.Join(b.other, ", "))
	}
	w.section("Go benchmarks (go test -bench)", t)
}
