package soak

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// check is one verdict on one server.
type check struct {
	name   string
	value  string
	passed bool
}

// checks judges a server's run.
func (s *ServerResult) checks() []check {
	var out []check
	valid5xx := s.Valid.count(func(c int) bool { return c >= 500 })
	validOther := s.Valid.count(func(c int) bool { return c != 200 && c < 500 })
	out = append(out, check{"no 5xx on valid requests", fmt.Sprintf("%d of %d", valid5xx, s.Valid.total()), valid5xx == 0})
	out = append(out, check{"valid requests answered 200 with the right body",
		fmt.Sprintf("%d other answers (no answer: %d), %d wrong bodies", validOther, s.Valid.snapshot()[0], s.ValidWrong.Load()),
		validOther == 0 && s.ValidWrong.Load() == 0})
	badOther := s.Bad.count(func(c int) bool { return c < 400 || c >= 500 })
	out = append(out, check{"bad requests answered 4xx", fmt.Sprintf("%d of %d otherwise", badOther, s.Bad.total()), badOther == 0})
	base, end, peak := s.rssSummary()
	growth := 0.0
	if base > 0 {
		growth = float64(end)/float64(base) - 1
	}
	out = append(out, check{"workers' RSS flat within 10 % after warm-up",
		fmt.Sprintf("%s → %s (%+.1f %%; peak %s)", mib(base), mib(end), 100*growth, mib(peak)), base > 0 && growth <= maxRSSGrowth})
	gOK := len(s.GoroutinesBefore) > 0 && sameKeys(s.GoroutinesBefore, s.GoroutinesAfter)
	var gs []string
	for _, id := range keys(s.GoroutinesBefore) {
		b, a := s.GoroutinesBefore[id], s.GoroutinesAfter[id]
		gs = append(gs, fmt.Sprintf("worker %s: %.0f → %.0f", id, b, a))
		if a > b+goroutineSlack {
			gOK = false
		}
	}
	out = append(out, check{"no goroutine growth (quiescent, per worker)", strings.Join(gs, ", "), gOK})
	out = append(out, check{"no file-descriptor growth (quiescent, supervisor + workers)",
		fmt.Sprintf("%d → %d", s.FDsBefore, s.FDsAfter), s.FDsBefore > 0 && s.FDsAfter <= s.FDsBefore+fdSlack})
	out = append(out, check{"the same worker processes throughout",
		fmt.Sprintf("pids %v → %v", s.PIDsBefore, s.PIDsAfter), fmt.Sprint(s.PIDsBefore) == fmt.Sprint(s.PIDsAfter)})
	return out
}

// rssSummary is the mean of the first and of the last samples after
// warm-up, and the peak.
func (s *ServerResult) rssSummary() (base, end, peak int64) {
	n := len(s.RSS)
	if n == 0 {
		return 0, 0, 0
	}
	w := min(rssWindow, max(1, n/3))
	mean := func(ss []Sample) int64 {
		var sum int64
		for _, x := range ss {
			sum += x.Bytes
		}
		return sum / int64(len(ss))
	}
	for _, x := range s.RSS {
		peak = max(peak, x.Bytes)
	}
	return mean(s.RSS[:w]), mean(s.RSS[n-w:]), peak
}

func sameKeys(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Passed reports whether every check of every server passed.
func (r *Result) Passed() bool { return len(r.Failures()) == 0 }

// Failures lists the failed checks.
func (r *Result) Failures() []string {
	var out []string
	for _, s := range r.Servers {
		for _, c := range s.checks() {
			if !c.passed {
				out = append(out, fmt.Sprintf("%s: %s (%s)", s.Model, c.name, c.value))
			}
		}
	}
	return out
}

// Markdown renders the result as the soak section of BENCHMARKS.md:
// tables only.
func (r *Result) Markdown() string {
	var b strings.Builder
	verdict := "passed"
	if !r.Passed() {
		verdict = "**failed**"
	}
	b.WriteString("## Soak (make soak)\n\n| run | |\n|---|---|\n")
	servers := fmt.Sprintf("`svc serve MODEL --workers %d`", r.Options.Workers)
	if r.Options.MaxBody != "" {
		servers += ", `limits.max_body_size: " + r.Options.MaxBody + "`"
	}
	for _, row := range [][2]string{
		{"date", r.Start.Format("2006-01-02 15:04 UTC")},
		{"commit", "`" + r.Commit + "`"},
		{"result", verdict},
		{"servers", servers},
		{"clients per server", fmt.Sprintf("%d, one request in ten on a new connection", r.Options.Concurrency)},
		{"duration", fmt.Sprintf("%s, the first %s a warm-up", r.Options.Duration, r.Warmup)},
		{"workers' RSS", fmt.Sprintf("sampled every %s; the means of the first and of the last %d samples after warm-up compared", r.Options.Interval, rssWindow)},
		{"goroutines, file descriptors", fmt.Sprintf("read at rest (%s idle) after warm-up and at the end; growth of up to %d allowed", quiesce, goroutineSlack)},
		{"CPUs", strconv.Itoa(r.CPUs)},
		{"load average before (1, 5, 15 min)", r.LoadAvg[0]},
		{"load average after", r.LoadAvg[1]},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	for _, s := range r.Servers {
		rps := 0.0
		if s.MainSeconds > 0 {
			rps = float64(s.MainRequests) / s.MainSeconds
		}
		fmt.Fprintf(&b, "\n### %s\n\n", s.Model)
		b.WriteString("| requests | valid | bad | per second after warm-up | answers to the valid | answers to the bad |\n|--:|--:|--:|--:|---|---|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %.0f | %s | %s |\n\n", s.Valid.total()+s.Bad.total(), s.Valid.total(), s.Bad.total(), rps,
			statuses(s.Valid.snapshot()), statuses(s.Bad.snapshot()))
		b.WriteString("| check | measured | verdict |\n|---|---|---|\n")
		for _, c := range s.checks() {
			v := "met"
			if !c.passed {
				v = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.name, c.value, v)
		}
		if len(s.Examples) > 0 {
			b.WriteString("\n| unexpected answers (the first ones) |\n|---|\n")
			for _, e := range s.Examples {
				fmt.Fprintf(&b, "| `%s` |\n", strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(e))
			}
		}
	}
	return b.String()
}

func statuses(m map[int]int64) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var parts []string
	for _, k := range ks {
		label := fmt.Sprint(k)
		if k == 0 {
			label = "no answer"
		}
		parts = append(parts, fmt.Sprintf("%s × %d", label, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
