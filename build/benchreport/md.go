package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// doc is the Markdown being written: headings and tables, nothing else.
type doc struct{ bytes.Buffer }

func (d *doc) heading(title string) { fmt.Fprintf(d, "## %s\n\n", title) }

// section writes a heading and its table; nothing when the table is
// empty.
func (d *doc) section(title string, t *table) {
	if len(t.rows) > 0 {
		d.heading(title)
		d.table(t)
	}
}

func (d *doc) subheading(title string) { fmt.Fprintf(d, "### %s\n\n", title) }

// table writes t with a blank line after it; an empty table is left out.
func (d *doc) table(t *table) {
	if len(t.rows) == 0 {
		return
	}
	line := func(cells []string) {
		d.WriteString("|")
		for _, c := range cells {
			d.WriteString(" " + cell(c) + " |")
		}
		d.WriteString("\n")
	}
	line(t.head)
	d.WriteString("|")
	for i := range t.head {
		if i < t.left {
			d.WriteString("---|")
		} else {
			d.WriteString("--:|")
		}
	}
	d.WriteString("\n")
	for _, r := range t.rows {
		line(r)
	}
	d.WriteString("\n")
}

// cell keeps text inside a table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// table is a Markdown table: its first left columns are text (aligned
// left), the others numbers (aligned right).
type table struct {
	head []string
	left int
	rows [][]string
}

func newTable(left int, head ...string) *table { return &table{head: head, left: left} }

// row adds a row; missing cells are left empty.
func (t *table) row(cells ...string) {
	r := make([]string, len(t.head))
	copy(r, cells)
	t.rows = append(t.rows, r)
}

// us writes a latency in µs as svc bench does.
func us(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v):
		return "-"
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64) + "µs"
	case v < 1000:
		return strconv.FormatFloat(v, 'f', 0, 64) + "µs"
	case v < 1e6:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "s"
}

// rps writes a rate: no decimals from 100 up, one below.
func rps(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// ratio writes a ratio with two decimals, three below 0.1.
func ratio(r float64) string {
	if r < 0.1 {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// pct writes a share as a percentage with one decimal.
func pct(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }

// change writes a relative change, signed, in whole percent.
func change(v float64) string { return fmt.Sprintf("%+.0f %%", 100*v) }

// cpuShare writes CPU seconds over wall seconds as top does: 100 % is one
// core.
func cpuShare(cpu, wall float64) string {
	if wall <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f %%", 100*cpu/wall)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func mibBytes(b float64) string { return fmt.Sprintf("%.2f MiB", b/(1<<20)) }

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) + " s" }

// stat summarises one number over repetitions.
type stat struct {
	median, min, max float64
	n                int
}

func statOf(vals []float64) stat {
	if len(vals) == 0 {
		return stat{}
	}
	return stat{median: median(vals), min: slices.Min(vals), max: slices.Max(vals), n: len(vals)}
}

// format writes the median, with the range when there are several
// values; "-" without any.
func (s stat) format(f func(float64) string) string {
	switch s.n {
	case 0:
		return "-"
	case 1:
		return f(s.median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.median), f(s.min), f(s.max))
}

// median of vals (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
