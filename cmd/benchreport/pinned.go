package main

import (
	"fmt"
	"io"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// pinnedProtocols are the protocols build/bench-pinned.sh runs, in order.
var pinnedProtocols = []bench.Protocol{bench.ProtocolV1, bench.ProtocolV2Binary}

// PinnedModel is build/bench-pinned.sh's runs on one model: ONNX Runtime in
// process on CPU 0 alone (Raw) and svc bench on CPU 1 against the server
// on CPU 0, per protocol.
type PinnedModel struct {
	Key  string
	Raw  *RawBatch
	Runs map[bench.Protocol]*bench.Report
}

// Pinned holds the models that ran, in protoModels order.
type Pinned []PinnedModel

// readPinned reads pinned-MODEL-raw.json and pinned-MODEL-PROTOCOL.json.
func readPinned(dir string) (Pinned, error) {
	var out Pinned
	for _, m := range protoModels {
		pm := PinnedModel{Key: m.key, Runs: map[bench.Protocol]*bench.Report{}}
		var raw RawBatch
		ok, err := readJSON(dir, "pinned-"+m.key+"-raw.json", &raw)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		pm.Raw = &raw
		for _, p := range pinnedProtocols {
			var r bench.Report
			ok, err := readJSON(dir, "pinned-"+m.key+"-"+string(p)+".json", &r)
			if err != nil {
				return nil, err
			}
			if ok {
				pm.Runs[p] = &r
			}
		}
		out = append(out, pm)
	}
	return out, nil
}

func (p Pinned) model(key string) *PinnedModel {
	for i := range p {
		if p[i].Key == key {
			return &p[i]
		}
	}
	return nil
}

// ratio is the best served level of protocol p (bench.Best, as bestRatio
// takes it) over the best raw mode on the one core; ok is false when either is missing.
func (m *PinnedModel) ratio(p bench.Protocol) (ratio float64, served *bench.Level, raw float64, ok bool) {
	_, best := Baseline(m.Raw)
	r := m.Runs[p]
	if best == nil || r == nil || best.Items.Max <= 0 {
		return 0, nil, 0, false
	}
	if served = bench.Best(r.Served); served == nil {
		return 0, nil, 0, false
	}
	return served.ThroughputRPS / best.Items.Max, served, best.Items.Max, true
}

// pinnedSentence says what the server kept of ONNX Runtime on one core
// with the load generator on the other, for model and protocol p; empty
// when that was not measured.
func pinnedSentence(d Data, model string, p bench.Protocol) string {
	m := d.Pinned.model(model)
	if m == nil {
		return ""
	}
	ratio, s, raw, ok := m.ratio(p)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" With the load generator off the server's cores (the server pinned to CPU 0, svc bench to CPU 1, and ONNX Runtime in process on CPU 0 alone; under Server alone on a core below), %s served %s/s at concurrency %d against %s items/s raw: %.2f, what the server itself keeps of ONNX Runtime on the core it has.",
		protoTitle(p), fmtRPS(s.ThroughputRPS), s.Concurrency, fmtRPS(raw), ratio)
}

// writePinned renders build/bench-pinned.sh's runs.
func writePinned(w io.Writer, p Pinned) {
	fmt.Fprintln(w, "## Server alone on a core (PaddleOCR cls and det)")
	fmt.Fprintln(w)
	if len(p) == 0 {
		fmt.Fprintln(w, "Not measured (needs taskset and 2 CPUs).")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "Every other served figure here shares the 2 cores between the server and the load generator, while in-process ONNX Runtime has them to itself. `build/bench-pinned.sh` takes the load generator out of the server's way: ONNX Runtime in process (`rawbatch`: batch 1 at the default threads, and one session of one thread) on CPU 0 alone, then `svc serve` pinned to CPU 0 and `svc bench` pinned to CPU 1 (`taskset`). Served ÷ raw is then what the server keeps of ONNX Runtime on the one core it has: the cost of HTTP, of the codec and of svc's scheduling, and nothing of the client's.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | raw on CPU 0 (best mode) | protocol | concurrency | served | p50 | served ÷ raw |")
	fmt.Fprintln(w, "|---|--:|---|--:|--:|--:|--:|")
	for _, m := range p {
		_, best := Baseline(m.Raw)
		rawText, raw := "", 0.0
		if best != nil {
			raw = best.Items.Max
			rawText = fmt.Sprintf("%s items/s (%s)", fmtRPS(raw), best.Label)
		}
		for _, proto := range pinnedProtocols {
			r := m.Runs[proto]
			if r == nil {
				fmt.Fprintf(w, "| %s | %s | %s | | not measured | | |\n", modelTitle(m.Key), rawText, protoTitle(proto))
				continue
			}
			for _, l := range r.Served {
				ratio := ""
				if raw > 0 {
					ratio = fmt.Sprintf("%.2f", l.ThroughputRPS/raw)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %d | %s/s | %s | %s |\n", modelTitle(m.Key), rawText, protoTitle(proto), l.Concurrency,
					fmtRPS(l.ThroughputRPS), bench.FormatMicros(l.LatencyUS.P50), ratio)
			}
		}
	}
	fmt.Fprintln(w)
}
