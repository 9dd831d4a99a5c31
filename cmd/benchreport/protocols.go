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
		{bench.ProtocolGRPC, "v2 gRPC, raw tensors"},
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

// ProtocolTargets checks the binary-tensor protocols (v2 binary tensors
// over HTTP, raw tensors over gRPC) against raw on each model.
func ProtocolTargets(ps Protocols) []Target {
	var out []Target
	for _, p := range []struct {
		key   bench.Protocol
		short string
		title string
	}{
		{bench.ProtocolV2Binary, "binary", "v2 binary tensors"},
		{bench.ProtocolGRPC, "grpc", "v2 gRPC raw tensors"},
	} {
		for _, m := range protoModels {
			out = append(out, protocolTarget(ps[m.key][p.key], p.short+"-"+m.key, m.title+", "+p.title))
		}
	}
	return out
}

// protocolTarget checks one protocol run r (nil: not measured) against
// binaryMinRatio.
func protocolTarget(r *bench.Report, key, what string) Target {
	t := Target{
		Key:      key,
		Goal:     fmt.Sprintf("%s: best served throughput ≥ %.2f × best in-process raw ONNX Runtime of the same run", what, binaryMinRatio),
		Measured: "not measured",
	}
	if r == nil {
		return t
	}
	ratio, s, raw, ok := bestRatio(r)
	if !ok {
		return t
	}
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
	return t
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
	fmt.Fprintln(w, "`svc bench --protocol P` on PaddleOCR cls and det (`build/bench-protocols.sh`): the same random inputs sent through /predict (v1 JSON), through the Open Inference Protocol's `/v2/models/{name}/infer` with JSON tensors, with binary tensors in and out, and through the gRPC ModelInfer with raw tensors. Each run then measures ONNX Runtime in svc bench's own process on the same inputs (raw: Predict only, no HTTP, no encoding, one session with svc's default runtime settings); the ratio is served ÷ raw at the same concurrency, and the last row of each block compares the best levels. Runs of different protocols are minutes apart, so a busy machine moves their ratios differently.")
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
	fmt.Fprint(w, "Binary tensors (v2 binary over HTTP, raw contents over gRPC) take the JSON encoding of the tensors out of the request and the answer; what remains between served and raw is the transport (HTTP/1.1 or HTTP/2 with protobuf framing: the body read and written once each), svc's scheduling of requests onto sessions, and the load generator, which runs on the same cores as the server while raw has them alone.")
	fmt.Fprintln(w, pinnedSentence(d, model, bench.ProtocolV2Binary))
	fmt.Fprintln(w)
	writeBinaryProfile(w, d, model)
}
