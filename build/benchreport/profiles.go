package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// topRows is how many of pprof -top's rows the tables show per profile.
const topRows = 10

// profile is one profiled run of build/bench.sh (profile_run): svc bench's
// report (prof-NAME.json), the CPU both sides used (prof-NAME.cpu.json),
// pprof -top of the server's CPU profile (prof-NAME.top.txt) and the
// focused shares (prof-NAME.focus-LABEL.txt: pprof -top -focus=REGEX,
// every node).
type profile struct {
	name  string
	run   Report
	cpu   ProfileCPU
	top   []topRow
	focus []focusShare
}

// topRow is one row of pprof -top, as pprof wrote it.
type topRow struct {
	flat, flatPct, cum, cumPct, fn string
}

// focusShare is the server CPU in the stacks through the functions a
// focus regular expression matches.
type focusShare struct {
	label, regex string
	seconds      float64
}

var (
	profFile  = regexp.MustCompile(`^prof-([a-z0-9-]+)\.json$`)
	focusFile = regexp.MustCompile(`^prof-([a-z0-9-]+)\.focus-([a-z0-9-]+)\.txt$`)
)

func loadProfiles(a *artifacts, d *data) error {
	for _, m := range a.match(profFile) {
		p := profile{name: m[1]}
		if _, err := a.json(m[0], &p.run); err != nil {
			return err
		}
		ok, err := a.json("prof-"+p.name+".cpu.json", &p.cpu)
		if err != nil {
			return err
		}
		if !ok {
			continue // the run failed before its CPU was read
		}
		p.top = parseTop(a.text("prof-" + p.name + ".top.txt"))
		for _, f := range a.match(focusFile) {
			if f[1] != p.name {
				continue
			}
			s, err := parseFocus(a.text(f[0]))
			if err != nil {
				return fmt.Errorf("%s: %w", f[0], err)
			}
			s.label = f[2]
			p.focus = append(p.focus, s)
		}
		d.profiles = append(d.profiles, p)
	}
	return nil
}

// parseTop reads the rows of pprof -top's output.
func parseTop(s string) []topRow {
	var out []topRow
	rows := false
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == "flat" && f[1] == "flat%" {
			rows = true
			continue
		}
		if !rows || len(f) < 6 {
			continue
		}
		out = append(out, topRow{flat: f[0], flatPct: f[1], cum: f[3], cumPct: f[4], fn: strings.Join(f[5:], " ")})
	}
	return out
}

var (
	focusFilter = regexp.MustCompile(`(?m)^\s+focus=(.*)$`)
	focusTotal  = regexp.MustCompile(`(?m)^Showing nodes accounting for (\S+), \S+ of \S+ total$`)
)

// parseFocus reads pprof -top -focus=REGEX output (every node shown): the
// regular expression and the CPU time of the samples it kept.
func parseFocus(s string) (focusShare, error) {
	var out focusShare
	m := focusFilter.FindStringSubmatch(s)
	if m == nil {
		return out, fmt.Errorf("no focus= filter in the pprof output")
	}
	out.regex = strings.TrimSpace(m[1])
	t := focusTotal.FindStringSubmatch(s)
	if t == nil {
		return out, fmt.Errorf("no \"Showing nodes accounting for\" line in the pprof output")
	}
	v, err := pprofSeconds(t[1])
	if err != nil {
		return out, err
	}
	out.seconds = v
	return out, nil
}

// pprofUnits are the time units pprof writes, in seconds.
var pprofUnits = []struct {
	suffix string
	s      float64
}{{"mins", 60}, {"hrs", 3600}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}, {"s", 1}}

// pprofSeconds parses a time as pprof writes it ("1.25s", "70ms", "0").
func pprofSeconds(s string) (float64, error) {
	if s == "0" {
		return 0, nil
	}
	for _, u := range pprofUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("pprof time %q: %w", s, err)
			}
			return v * u.s, nil
		}
	}
	return 0, fmt.Errorf("pprof time %q: unknown unit", s)
}

// requests counts the run's requests: the measured ones, failed ones
// included, and svc bench's probes (one per body).
func (p *profile) requests() int64 {
	n := int64(p.run.Settings.Bodies)
	for _, l := range p.run.Served {
		n += l.Requests + l.Errors
	}
	return n
}

func writeProfiles(w *doc, d *data) {
	t := newTable(3, "run", "model", "protocol", "concurrency", "requests", "req/s", "p50", "wall", "server CPU", "svc bench CPU", "server CPU per request", "svc bench's share of the CPU")
	for _, p := range d.profiles {
		l := p.run.first()
		if l == nil {
			continue
		}
		n, c := p.requests(), p.cpu
		perReq, share := "", ""
		if n > 0 {
			perReq = us(1e6 * c.ServerCPUS / float64(n))
		}
		if c.ServerCPUS+c.BenchCPUS > 0 {
			share = pct(c.BenchCPUS / (c.ServerCPUS + c.BenchCPUS))
		}
		t.row(p.name, p.run.Model.Name, p.run.protocol(), strconv.Itoa(l.Concurrency), strconv.FormatInt(n, 10), rps(l.ThroughputRPS), us(l.LatencyUS.P50),
			seconds(c.WallS), seconds(c.ServerCPUS), seconds(c.BenchCPUS), perReq, share)
	}
	w.section("CPU profiles of the server: the runs (build/bench.sh, SVC_CPUPROFILE)", t)
}

func writeFocus(w *doc, d *data) {
	t := newTable(3, "run", "part", "pprof -focus", "server CPU in it", "share of the server's CPU", "per request")
	for _, p := range d.profiles {
		for _, f := range p.focus {
			share, perReq := "", ""
			if p.cpu.ServerCPUTotalS > 0 {
				share = pct(f.seconds / p.cpu.ServerCPUTotalS)
			}
			if n := p.requests(); n > 0 {
				perReq = us(1e6 * f.seconds / float64(n))
			}
			t.row(p.name, f.label, "`"+f.regex+"`", seconds(f.seconds), share, perReq)
		}
	}
	w.section("CPU profiles of the server: parts (pprof -focus over the server's life)", t)
}

func writeTopFunctions(w *doc, d *data) {
	t := newTable(2, "run", "function", "flat", "flat %", "cum", "cum %")
	for _, p := range d.profiles {
		for i, r := range p.top {
			if i == topRows {
				break
			}
			t.row(p.name, "`"+r.fn+"`", r.flat, r.flatPct, r.cum, r.cumPct)
		}
	}
	w.section(fmt.Sprintf("CPU profiles of the server: the top %d functions by own time (pprof -top)", topRows), t)
}
