package main

import "strconv"

// sweeps are build/bench.sh's svc bench runs that start the server
// themselves and sweep the concurrency: served, then in process (raw:
// Predict; raw+codec: decoding, Predict and encoding).
var sweepFiles = []struct{ file, title string }{
	{"tiny.json", "tiny model (testdata/models/classifier.onnx)"},
	{"cls.json", "PaddleOCR cls (build/models/paddleocr-cls)"},
}

type sweep struct {
	title string
	run   *Report
}

func loadSweeps(a *artifacts, d *data) error {
	for _, f := range sweepFiles {
		r, err := optional[Report](a, f.file)
		if err != nil {
			return err
		}
		if r != nil {
			d.sweeps = append(d.sweeps, sweep{f.title, r})
		}
	}
	return nil
}

func writeSweeps(w *doc, d *data) {
	if len(d.sweeps) == 0 {
		return
	}
	w.heading("svc bench: served and in process, by concurrency (build/bench.sh)")
	for _, s := range d.sweeps {
		t := newTable(1, "mode", "concurrency", "requests", "req/s", "p50", "p90", "p99", "max", "errors")
		for _, mode := range []struct {
			name   string
			levels []Level
		}{{"served", s.run.Served}, {"raw", s.run.Raw}, {"raw+codec", s.run.RawCodec}} {
			for _, l := range mode.levels {
				t.row(mode.name, strconv.Itoa(l.Concurrency), strconv.FormatInt(l.Requests, 10), rps(l.ThroughputRPS),
					us(l.LatencyUS.P50), us(l.LatencyUS.P90), us(l.LatencyUS.P99), us(l.LatencyUS.Max), strconv.FormatInt(l.Errors, 10))
			}
		}
		w.subheading(s.title)
		w.table(t)
	}
}
