package soak

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// check is one verdict on one server.
type check struct {
	name   string
	value  string
	passed bool
}

// classList writes counts by class, in the classes' order.
func classList(m map[class]int64, skip ...class) string {
	var parts []string
	for c := range classNames {
		if v := m[class(c)]; v > 0 && !containsClass(skip, class(c)) {
			parts = append(parts, fmt.Sprintf("%s %d", class(c), v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func containsClass(cs []class, c class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// checks judges a server's run.
func (s *ServerResult) checks() []check {
	var out []check
	alive := s.Exited == ""
	v := "yes"
	if !alive {
		v = s.Exited
	}
	out = append(out, check{"the server ran throughout", v, alive})
	workers := make([]int, 0, len(s.WorkerPIDs))
	for pid := range s.WorkerPIDs {
		workers = append(workers, pid)
	}
	sort.Ints(workers)
	out = append(out, check{"the same worker processes throughout (none crashed or restarted)",
		fmt.Sprintf("pids %v → %v; seen %v", s.PIDsBefore, s.PIDsAfter, workers),
		len(s.PIDsBefore) == s.Workers && fmt.Sprint(s.PIDsBefore) == fmt.Sprint(s.PIDsAfter) && len(workers) == s.Workers})
	peak := s.peak()
	out = append(out, check{fmt.Sprintf("peak RSS under %s (supervisor + workers: the sum of each process's VmHWM)", mib(s.RSSBound)),
		fmt.Sprintf("%s (the largest sum of VmRSS sampled: %s)", mib(peak), mib(s.SampledPeak)), peak > 0 && peak < s.RSSBound})

	nValid, _, vc := s.totals(true)
	valid5xx := vc[classBusy] + vc[classDeadline] + vc[classServerErr]
	out = append(out, check{"no 5xx on valid requests", fmt.Sprintf("%d of %d (503 busy: %d)", valid5xx, nValid, vc[classBusy]), valid5xx == 0})
	// The 5xx are the check above's; this one counts the rest.
	other := nValid - vc[classOK] - valid5xx
	out = append(out, check{"valid requests answered 200 with the right body",
		fmt.Sprintf("%d of %d otherwise, 5xx aside: %s", other, nValid, classList(vc, classOK, classBusy, classDeadline, classServerErr)), nValid > 0 && other == 0})
	nBad, unexpected, bc := s.totals(false)
	out = append(out, check{"attacks and bad requests refused: 4xx, 503 busy or a close (504 where a deadline passes), never a 500",
		fmt.Sprintf("%d of %d otherwise (5xx: %d); answers: %s", unexpected, nBad, bc[classServerErr], classList(bc)), unexpected == 0})

	base, end, rssPeak := s.rssSummary()
	growth := 0.0
	if base > 0 {
		growth = float64(end)/float64(base) - 1
	}
	out = append(out, check{"workers' RSS flat within 10 % after warm-up",
		fmt.Sprintf("%s → %s (%+.1f %%; peak %s)", mib(base), mib(end), 100*growth, mib(rssPeak)), base > 0 && growth <= maxRSSGrowth})
	return append(out, s.restChecks()...)
}

// restChecks compare the readings at rest: goroutines and fds. The
// connections that forward sequence steps between workers are a pool,
// not a leak: it grows and shrinks with the steps forwarded at once, and
// its connections move between the workers (one worker's client end is
// the other's server end). So their unix sockets are counted apart (they
// may grow up to the pool's bound), the goroutines are compared summed
// over the workers, and each connection added allows two more (a
// client's reader and writer).
func (s *ServerResult) restChecks() []check {
	pool := max(0, s.UnixAfter-s.UnixBefore)
	gOK := len(s.GoroutinesBefore) > 0 && sameKeys(s.GoroutinesBefore, s.GoroutinesAfter)
	var gs []string
	var before, after float64
	for _, id := range keys(s.GoroutinesBefore) {
		b, a := s.GoroutinesBefore[id], s.GoroutinesAfter[id]
		gs = append(gs, fmt.Sprintf("worker %s: %.0f → %.0f", id, b, a))
		before, after = before+b, after+a
	}
	allowed := goroutineSlack*len(s.GoroutinesBefore) + 2*pool
	gOK = gOK && after <= before+float64(allowed)
	g := fmt.Sprintf("%.0f → %.0f (%s); up to %d more allowed", before, after, strings.Join(gs, ", "), allowed)
	if pool > 0 {
		g += fmt.Sprintf(", %d of them for the %d connections the workers opened to forward sequence steps", 2*pool, pool)
	}
	bound := 2 * seqPool * s.Workers * (s.Workers - 1) // both ends of each idle connection
	fOK := s.FDsBefore > 0 && s.FDsAfter-s.UnixAfter <= s.FDsBefore-s.UnixBefore+fdSlack && s.UnixAfter <= max(s.UnixBefore, bound+2*s.Workers)
	return []check{
		{"no goroutine growth (quiescent, the workers' summed)", g, gOK},
		{"no file-descriptor growth (quiescent, supervisor + workers)",
			fmt.Sprintf("%d → %d; of them the workers' unix sockets %d → %d (a pool that forwards sequence steps between workers: at most %d)",
				s.FDsBefore, s.FDsAfter, s.UnixBefore, s.UnixAfter, bound+2*s.Workers), fOK},
	}
}

// rssSummary is the median of the first and of the last third of the
// samples after warm-up, and the peak: medians, since a server under
// attack swings by a fifth from one sample to the next as Go's heap
// grows and shrinks, where a leak moves the whole last third.
func (s *ServerResult) rssSummary() (base, end, peak int64) {
	n := len(s.RSS)
	if n == 0 {
		return 0, 0, 0
	}
	w := max(1, n/3)
	median := func(ss []Sample) int64 {
		v := make([]int64, len(ss))
		for i, x := range ss {
			v[i] = x.Bytes
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[len(v)/2]
	}
	for _, x := range s.RSS {
		peak = max(peak, x.Bytes)
	}
	return median(s.RSS[:w]), median(s.RSS[n-w:]), peak
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
				out = append(out, fmt.Sprintf("%s: %s (%s)", s.Name, c.name, c.value))
			}
		}
	}
	return out
}

// mdEscape makes text safe in a table cell.
var mdEscape = strings.NewReplacer("`", "'", "|", `\|`, "\n", " ")

// Markdown renders the result as the soak section of BENCHMARKS.md:
// tables only.
func (r *Result) Markdown() string {
	var b strings.Builder
	verdict := "passed"
	if !r.Passed() {
		verdict = "**failed**"
	}
	b.WriteString("## Soak (make soak)\n\n| run | |\n|---|---|\n")
	o := r.Options
	for _, row := range [][2]string{
		{"date", r.Start.Format("2006-01-02 15:04 UTC")},
		{"commit", "`" + r.Commit + "`"},
		{"result", verdict},
		{"servers", fmt.Sprintf("%d, each `svc serve ... --workers %d`; classifier and multi_input with `limits.max_body_size: %s`, the others with svc's default limits", len(r.Servers), o.Workers, o.MaxBody)},
		{"clients per server", fmt.Sprintf("%d, one HTTP request in ten on a new connection; beside them, against each stateful model's WebSocket stream, %d idle connections and %d that announce a 16 MiB frame and send 1 KiB, each opened again when the server closes it", o.Concurrency, o.WSIdle, o.WSHalf)},
		{"duration", fmt.Sprintf("%s, the first %s a warm-up", o.Duration, r.Warmup)},
		{"peak RSS", fmt.Sprintf("each process's VmHWM (the kernel's peak of its RSS, which no sampling misses) summed over the supervisor and its workers: a bound of the server's peak, which it must keep under %s; VmRSS summed, sampled every %s, beside it", mib(o.RSSBound), o.Interval)},
		{"workers' RSS", "sampled after warm-up; the medians of the first and of the last third of the samples compared"},
		{"goroutines, file descriptors", fmt.Sprintf("read at rest (no request in flight, then %s idle, the WebSocket pools closed) after warm-up and at the end; goroutines summed over the workers, growth of up to %d a worker allowed, and what the pool of connections that forward sequence steps between workers adds", quiesce, goroutineSlack)},
		{"CPUs", strconv.Itoa(r.CPUs)},
		{"load average before (1, 5, 15 min)", r.LoadAvg[0]},
		{"load average after", r.LoadAvg[1]},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	for _, s := range r.Servers {
		s.markdown(&b)
	}
	return b.String()
}

func (s *ServerResult) markdown(b *strings.Builder) {
	rps := 0.0
	if s.MainSeconds > 0 {
		rps = float64(s.MainRequests) / s.MainSeconds
	}
	nValid, _, _ := s.totals(true)
	nBad, _, _ := s.totals(false)
	fmt.Fprintf(b, "\n### %s: `%s`\n\n", s.Name, mdEscape.Replace(s.Command))
	b.WriteString("| requests | valid | attacks and bad | per second after warm-up | peak RSS |\n|--:|--:|--:|--:|--:|\n")
	fmt.Fprintf(b, "| %d | %d | %d | %.0f | %s |\n\n", nValid+nBad, nValid, nBad, rps, mib(s.peak()))
	b.WriteString("| kind | | requests | answers | mean | slowest | as expected |\n|---|---|--:|---|--:|--:|---|\n")
	for _, k := range s.kinds.snapshot() {
		what := "attack"
		if k.Valid {
			what = "valid"
		}
		ok := "all"
		if k.Unexpected > 0 {
			ok = fmt.Sprintf("**%d not**", k.Unexpected)
		}
		mean := time.Duration(0)
		if k.Count > 0 {
			mean = k.Time / time.Duration(k.Count)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s |\n", mdEscape.Replace(k.Name), what, k.Count,
			mdEscape.Replace(answers(k.Answers)), mean.Round(time.Millisecond), k.Slowest.Round(time.Millisecond), ok)
	}
	b.WriteString("\n| check | measured | verdict |\n|---|---|---|\n")
	for _, c := range s.checks() {
		v := "met"
		if !c.passed {
			v = "**missed**"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.name, mdEscape.Replace(c.value), v)
	}
	if len(s.Budget) > 0 {
		b.WriteString("\n| the budget at the end (Prometheus) | value |\n|---|--:|\n")
		for _, k := range budgetKeys(s.Budget) {
			v := s.Budget[k]
			cell := strconv.FormatFloat(v, 'f', -1, 64)
			if strings.HasSuffix(strings.SplitN(k, "{", 2)[0], "_bytes") {
				cell = mib(int64(v))
			}
			fmt.Fprintf(b, "| `%s` | %s |\n", k, cell)
		}
	}
	if len(s.Examples) > 0 {
		b.WriteString("\n| unexpected answers (the first ones) |\n|---|\n")
		for _, e := range s.Examples {
			fmt.Fprintf(b, "| `%s` |\n", mdEscape.Replace(e))
		}
	}
}

// budgetKeys are the budget's series worth a row: the peak and the
// refusals (the limit, what is held now and the counts of reservations
// are left out), sorted.
func budgetKeys(m map[string]float64) []string {
	var out []string
	for k := range m {
		name := strings.SplitN(k, "{", 2)[0]
		if name == "svc_request_memory_peak_bytes" || name == "svc_request_memory_refused_total" || name == "svc_request_memory_waits_total" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// answers writes counts by label, the most frequent first.
func answers(m map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || (l[i].v == l[j].v && l[i].k < l[j].k) })
	var parts []string
	for _, x := range l {
		parts = append(parts, fmt.Sprintf("%s × %d", x.k, x.v))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
