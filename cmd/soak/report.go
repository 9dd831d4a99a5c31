package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
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

// Markdown renders the result as the soak section of BENCHMARKS.md.
func (r *Result) Markdown() string {
	var b strings.Builder
	verdict := "**passed**"
	if !r.Passed() {
		verdict = "**failed**"
	}
	fmt.Fprintf(&b, "## Soak\n\n")
	fmt.Fprintf(&b, "`make soak` (cmd/soak) on %s at commit `%s`: %s. Two servers, `svc serve MODEL --workers %d`%s, each loaded by %d concurrent clients for %s (the first %s a warm-up) with a mix of valid v1 and v2 requests (JSON and gzip) and bad ones (malformed JSON, wrong shapes and kinds, empty batches, invalid UTF-8, out-of-range integers, deep nesting, gzip bombs, unknown encodings, content types, methods and paths); one request in ten on a new connection.\n\n",
		r.Start.Format("2006-01-02 15:04 UTC"), r.Commit, verdict, r.Options.Workers, maxBodyNote(r.Options.MaxBody), r.Options.Concurrency, r.Options.Duration, r.Warmup)
	fmt.Fprintf(&b, "Machine: %d CPUs, **shared with other jobs and noisy** (load average %s before, %s after); the load generator runs on the same cores, so throughput figures are only indicative.\n\n", r.CPUs, r.LoadAvg[0], r.LoadAvg[1])
	for _, s := range r.Servers {
		rps := 0.0
		if s.MainSeconds > 0 {
			rps = float64(s.MainRequests) / s.MainSeconds
		}
		fmt.Fprintf(&b, "### %s\n\n%d requests (%d valid, %d bad), %.0f/s after warm-up. Answers: valid %s; bad %s.\n\n",
			s.Model, s.Valid.total()+s.Bad.total(), s.Valid.total(), s.Bad.total(), rps, statuses(s.Valid.snapshot()), statuses(s.Bad.snapshot()))
		b.WriteString("| check | measured | verdict |\n|---|---|---|\n")
		for _, c := range s.checks() {
			v := "met"
			if !c.passed {
				v = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.name, c.value, v)
		}
		if len(s.Examples) > 0 {
			b.WriteString("\nUnexpected answers (first ones):\n\n")
			for _, e := range s.Examples {
				fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(e, "`", "'"))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "RSS is VmRSS from `/proc/<pid>/status` summed over the workers, sampled every %s; the figures compare the mean of the first and of the last %d samples after warm-up. Goroutines are `go_goroutines` from each worker's Prometheus exposition (scraped until every `X-Worker-Id` has answered) and file descriptors the entries of `/proc/<pid>/fd`, both read with the servers at rest (client connections closed, %s idle) after warm-up and at the end; a difference of up to %d counts as no growth.\n",
		r.Options.Interval, rssWindow, quiesce, goroutineSlack)
	return b.String()
}

func maxBodyNote(v string) string {
	if v == "" {
		return ""
	}
	return " with `limits.max_body_size: " + v + "`"
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

// WriteSection puts body into file between <!-- name:begin --> and
// <!-- name:end -->, replacing the section if the file has it and appending
// it otherwise (cmd/benchreport keeps such sections when it rewrites the
// file).
func WriteSection(file, name, body string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(file, replaceSection(old, name, body), 0o644)
}

func replaceSection(old []byte, name, body string) []byte {
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	section := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end + "\n"
	if i := bytes.Index(old, []byte(begin)); i >= 0 {
		if j := bytes.Index(old[i:], []byte(end)); j >= 0 {
			k := i + j + len(end)
			if k < len(old) && old[k] == '\n' {
				k++
			}
			return append(append(append([]byte{}, old[:i]...), section...), old[k:]...)
		}
	}
	out := append([]byte{}, old...)
	if len(out) > 0 {
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if !bytes.HasSuffix(out, []byte("\n\n")) {
			out = append(out, '\n')
		}
	}
	return append(out, section...)
}
