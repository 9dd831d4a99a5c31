package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Goals of the image issue: preprocessing at most 2× OpenCV's time per
// image, and posting a picture at least 0.9× the throughput of posting the
// tensor made of it.
const (
	preprocessGoal = 2.0
	e2eGoal        = 0.9
)

// preprocessRow is one case of build/bench-image.sh's table
// (image-preprocess.md): milliseconds per image, svc and OpenCV.
type preprocessRow struct {
	name    string
	svc, cv float64
}

// e2eLevel is build/bench-images.sh's runs at one concurrency: the image
// and the tensor posted, one svc bench report per pair each
// (e2e-KIND-cC-P.json). The ratio is taken within each pair (the two runs
// back to back) and its median shown, so that the machine's drift between
// pairs cancels.
type e2eLevel struct {
	c             int
	image, tensor []Level
	imageBytes    int
	tensorBytes   int
	// pairs holds each pair's image and tensor run, by pair number.
	pairs map[int]*[2]*Level
}

var (
	e2eFile      = regexp.MustCompile(`^e2e-(image|tensor)-c(\d+)-(\d+)\.json$`)
	preprocessRe = regexp.MustCompile(`^\|\s*([^|]+?)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|`)
)

// parsePreprocess reads the rows of build/bench-image.sh's markdown table.
func parsePreprocess(text string) []preprocessRow {
	var rows []preprocessRow
	for _, line := range strings.Split(text, "\n") {
		m := preprocessRe.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		svc, err1 := strconv.ParseFloat(m[2], 64)
		cv, err2 := strconv.ParseFloat(m[3], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		rows = append(rows, preprocessRow{name: m[1], svc: svc, cv: cv})
	}
	return rows
}

func loadImages(a *artifacts, d *data) error {
	d.preprocess = parsePreprocess(a.text("image-preprocess.md"))
	byC := map[int]*e2eLevel{}
	for _, m := range a.match(e2eFile) {
		var r Report
		if ok, err := a.json(m[0], &r); err != nil || !ok {
			return err
		}
		c, _ := strconv.Atoi(m[2])
		pair, _ := strconv.Atoi(m[3])
		l := level(r.Served, c)
		if l == nil {
			continue
		}
		e := byC[c]
		if e == nil {
			e = &e2eLevel{c: c, pairs: map[int]*[2]*Level{}}
			byC[c] = e
		}
		if e.pairs[pair] == nil {
			e.pairs[pair] = &[2]*Level{}
		}
		if m[1] == "image" {
			e.image, e.imageBytes = append(e.image, *l), r.Settings.BodyBytes
			e.pairs[pair][0] = l
		} else {
			e.tensor, e.tensorBytes = append(e.tensor, *l), r.Settings.BodyBytes
			e.pairs[pair][1] = l
		}
	}
	for _, e := range byC {
		d.e2e = append(d.e2e, *e)
	}
	slices.SortFunc(d.e2e, func(x, y e2eLevel) int { return x.c - y.c })
	return nil
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

func writeImages(w *doc, d *data) {
	if len(d.preprocess) > 0 {
		t := newTable(1, "case", "svc ms/image", "OpenCV ms/image", "svc ÷ OpenCV", "goal ≤ 2×")
		for _, r := range d.preprocess {
			div := r.svc / r.cv
			t.row(r.name, strconv.FormatFloat(r.svc, 'f', 2, 64), strconv.FormatFloat(r.cv, 'f', 2, 64), ratio(div)+"×", met(div <= preprocessGoal))
		}
		w.section("Images: preprocessing against single-threaded OpenCV (build/bench-image.sh)", t)
	}
	if len(d.e2e) == 0 {
		return
	}
	t := newTable(1, "concurrency", "pairs", "image req/s", "image p50", "tensor req/s", "tensor p50", "image ÷ tensor, per pair", "goal ≥ 0.9×")
	for _, e := range d.e2e {
		img, ten := levelStats(e.image), levelStats(e.tensor)
		var ratios []float64
		for _, p := range e.pairs {
			if p[0].ok() && p[1].ok() && p[1].ThroughputRPS > 0 {
				ratios = append(ratios, p[0].ThroughputRPS/p[1].ThroughputRPS)
			}
		}
		rs := statOf(ratios)
		goal := "-"
		if rs.n > 0 {
			goal = met(rs.median >= e2eGoal)
		}
		t.row(strconv.Itoa(e.c), strconv.Itoa(rs.n), img.rps.format(rps), img.p50.format(us),
			ten.rps.format(rps), ten.p50.format(us), rs.format(func(r float64) string { return ratio(r) + "×" }), goal)
	}
	title := "Images: PaddleOCR rec end to end, a picture posted against its tensor over v2 binary (build/bench-images.sh)"
	if e := d.e2e[0]; e.imageBytes > 0 && e.tensorBytes > 0 {
		title += fmt.Sprintf("; bodies %.1f KiB and %.0f KiB", float64(e.imageBytes)/1024, float64(e.tensorBytes)/1024)
	}
	w.section(title, t)
}

// levelStats are the medians (and ranges) of throughput and p50 over runs;
// a run with errors only is left out.
func levelStats(ls []Level) struct{ rps, p50 stat } {
	var r, p []float64
	for _, l := range ls {
		if l.ok() {
			r, p = append(r, l.ThroughputRPS), append(p, l.LatencyUS.P50)
		}
	}
	return struct{ rps, p50 stat }{statOf(r), statOf(p)}
}
