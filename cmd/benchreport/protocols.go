package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// The protocol runs of build/bench-protocols.sh: proto-MODEL-PROTOCOL.json.
var (
	protoModels = []struct{ key, title string }{
		{"cls", "PaddleOCR cls"},
		{"det", "PaddleOCR det"},
	}
	protoNames = []struct {
		key   bench.Protocol
		title string
	}{
		{bench.ProtocolV1, "v1 JSON (/predict)"},
		{bench.ProtocolV2JSON, "v2 JSON tensors"},
		{bench.ProtocolV2Binary, "v2 binary tensors"},
	}
)

// binaryMinRatio is the target for v2 binary tensors: best served
// throughput ≥ this share of the best in-process raw throughput of the
// same run.
const binaryMinRatio = 0.95

// Protocols holds the protocol runs by model key and protocol.
type Protocols map[string]map[bench.Protocol]*bench.Report

func protoFile(model string, p bench.Protocol) string {
	return "proto-" + model + "-" + string(p) + ".json"
}

// readProtocols reads the protocol runs that exist.
func readProtocols(dir string) (Protocols, error) {
	out := Protocols{}
	for _, m := range protoModels {
		for _, p := range protoNames {
			var r bench.Report
			ok, err := readJSON(dir, protoFile(m.key, p.key), &r)
			if err != nil {
				return nil, err
			}
			if ok {
				if out[m.key] == nil {
					out[m.key] = map[bench.Protocol]*bench.Report{}
				}
				out[m.key][p.key] = &r
			}
		}
	}
	return out, nil
}

// bestRatio is the best served throughput of r over its best raw one.
func bestRatio(r *bench.Report) (ratio float64, s, raw *bench.Level, ok bool) {
	s, raw = bench.Best(r.Served), bench.Best(r.Raw)
	if s == nil || raw == nil || raw.ThroughputRPS <= 0 {
		return 0, s, raw, false
	}
	return s.ThroughputRPS / raw.ThroughputRPS, s, raw, true
}

// ProtocolTargets checks v2 binary tensors against raw on each model.
func ProtocolTargets(ps Protocols) []Target {
	var out []Target
	for _, m := range protoModels {
		t := Target{
			Key:      "binary-" + m.key,
			Goal:     fmt.Sprintf("%s, v2 binary tensors: best served throughput ≥ %.2f × best in-process raw ONNX Runtime of the same run", m.title, binaryMinRatio),
			Measured: "not measured",
		}
		if r := ps[m.key][bench.ProtocolV2Binary]; r != nil {
			if ratio, s, raw, ok := bestRatio(r); ok {
				t.Measured = fmt.Sprintf("%.2f (served %.1f/s at concurrency %d, raw %.1f/s at concurrency %d)",
					ratio, s.ThroughputRPS, s.Concurrency, raw.ThroughputRPS, raw.Concurrency)
				n := errorsIn(r.Served)
				t.Met = met(ratio >= binaryMinRatio && n == 0)
				if ratio < binaryMinRatio {
					t.Miss = fmt.Sprintf("%.2f: %.1f/s served against the %.1f/s needed", binaryMinRatio-ratio, s.ThroughputRPS, binaryMinRatio*raw.ThroughputRPS)
				}
				if n > 0 {
					t.Measured += fmt.Sprintf("; served had %d errors", n)
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// writeProtocols renders the protocol rows: per model and protocol, each
// level's served and raw throughput and their ratio.
func writeProtocols(w *bytes.Buffer, ps Protocols) {
	fmt.Fprintln(w, "## Protocols: served ÷ in-process ONNX Runtime")
	fmt.Fprintln(w)
	if len(ps) == 0 {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "`svc bench --protocol P` on PaddleOCR cls and det (`build/bench-protocols.sh`): the same random inputs sent through /predict (v1 JSON), through the Open Inference Protocol's `/v2/models/{name}/infer` with JSON tensors, and with binary tensors in and out. Each run then measures ONNX Runtime in svc bench's own process on the same inputs (raw: Predict only, no HTTP, no encoding, one session with svc's default runtime settings); the ratio is served ÷ raw at the same concurrency, and the last row of each block compares the best levels. Runs of different protocols are minutes apart, so a busy machine moves their ratios differently.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | protocol | concurrency | body | served | raw | served ÷ raw | p50 served | errors |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, m := range protoModels {
		for _, p := range protoNames {
			r := ps[m.key][p.key]
			if r == nil {
				fmt.Fprintf(w, "| %s | %s | | | not measured | | | | |\n", m.title, p.title)
				continue
			}
			body := kib(r.Settings.BodyBytes)
			for _, s := range r.Served {
				raw := level(r.Raw, s.Concurrency)
				rawCol, ratioCol := "", ""
				if raw != nil {
					rawCol = fmt.Sprintf("%.1f/s", raw.ThroughputRPS)
					if raw.ThroughputRPS > 0 {
						ratioCol = fmt.Sprintf("%.2f", s.ThroughputRPS/raw.ThroughputRPS)
					}
				}
				fmt.Fprintf(w, "| %s | %s | %d | %s | %.1f/s | %s | %s | %s | %d |\n",
					m.title, p.title, s.Concurrency, body, s.ThroughputRPS, rawCol, ratioCol, bench.FormatMicros(s.LatencyUS.P50), s.Errors)
			}
			if ratio, s, raw, ok := bestRatio(r); ok {
				fmt.Fprintf(w, "| %s | %s | best | %s | %.1f/s (c=%d) | %.1f/s (c=%d) | **%.2f** | | |\n",
					m.title, p.title, body, s.ThroughputRPS, s.Concurrency, raw.ThroughputRPS, raw.Concurrency, ratio)
			}
		}
	}
	fmt.Fprintln(w)
}

func kib(n int) string { return fmt.Sprintf("%.0f KiB", float64(n)/1024) }

// whyBinary puts a missed binary-tensor target beside the other protocols
// of the same model: what the protocol costs, and what it does not.
func whyBinary(w io.Writer, d Data, model string) {
	runs := d.Protocols[model]
	fmt.Fprintln(w, "Best served ÷ best raw of each protocol on this model (each its own run):")
	fmt.Fprintln(w)
	for _, p := range protoNames {
		if r := runs[p.key]; r != nil {
			if ratio, s, raw, ok := bestRatio(r); ok {
				fmt.Fprintf(w, "- %s: %.2f (served %.1f/s at concurrency %d, raw %.1f/s at concurrency %d)\n", p.title, ratio, s.ThroughputRPS, s.Concurrency, raw.ThroughputRPS, raw.Concurrency)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Binary tensors take the JSON encoding of the tensors out of the request and the answer; what remains between served and raw is HTTP (the body read and written once each), svc's scheduling of requests onto sessions, and the load generator, which runs on the same cores as the server while raw has them alone. No profile of the binary path is taken by `make bench` yet.")
	fmt.Fprintln(w)
}
