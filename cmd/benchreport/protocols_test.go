package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func TestProtocolTargets(t *testing.T) {
	binary := func(served, raw []bench.Level) Protocols {
		return Protocols{"cls": {bench.ProtocolV2Binary: {Served: served, Raw: raw}}}
	}
	tests := []struct {
		name     string
		give     Protocols
		want     string // the cls target's result
		measured string
	}{
		{"met", binary([]bench.Level{lvl(1, 900, 1000), lvl(4, 1300, 3000)}, []bench.Level{lvl(1, 1000, 700), lvl(4, 1350, 2000)}), "**met**",
			"0.96 (served 1300.0/s at concurrency 4, raw 1350.0/s at concurrency 4)"},
		{"missed", binary([]bench.Level{lvl(1, 600, 1000)}, []bench.Level{lvl(1, 1000, 700), lvl(4, 1200, 2000)}), "**missed**",
			"0.50 (served 600.0/s at concurrency 1, raw 1200.0/s at concurrency 4)"},
		{"errors miss", binary([]bench.Level{{Concurrency: 1, Requests: 10, Errors: 2, ThroughputRPS: 1000}}, []bench.Level{lvl(1, 1000, 700)}), "**missed**",
			"1.00 (served 1000.0/s at concurrency 1, raw 1000.0/s at concurrency 1); served had 2 errors"},
		{"no raw", binary([]bench.Level{lvl(1, 600, 1000)}, nil), "not checked", "not measured"},
		{"not run", Protocols{}, "not checked", "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ProtocolTargets(tt.give)
			if len(got) != 4 || got[0].Key != "binary-cls" || got[1].Key != "binary-det" || got[2].Key != "grpc-cls" || got[3].Key != "grpc-det" {
				t.Fatalf("targets = %+v", got)
			}
			for _, g := range got[2:] {
				if g.result() != "not checked" {
					t.Errorf("%s without runs: %s", g.Key, g.result())
				}
			}
			if got[0].result() != tt.want || got[0].Measured != tt.measured {
				t.Errorf("cls: %s %q, want %s %q", got[0].result(), got[0].Measured, tt.want, tt.measured)
			}
			if got[1].result() != "not checked" {
				t.Errorf("det without runs: %s", got[1].result())
			}
		})
	}
}

// TestWriteProtocols: the protocol runs build/bench-protocols.sh leaves
// become rows of served ÷ raw per level and a best row, and a missed
// binary target is explained beside the other protocols.
func TestWriteProtocols(t *testing.T) {
	dir := t.TempDir()
	put := func(model string, p bench.Protocol, r bench.Report) {
		if err := os.WriteFile(filepath.Join(dir, protoFile(model, p)), mustJSON(t, r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw := []bench.Level{lvl(1, 1000, 700), lvl(4, 1400, 2000)}
	put("cls", bench.ProtocolV1, bench.Report{Settings: bench.Settings{BodyBytes: 294912}, Served: []bench.Level{lvl(1, 400, 2000), lvl(4, 500, 8000)}, Raw: raw})
	put("cls", bench.ProtocolV2Binary, bench.Report{Settings: bench.Settings{BodyBytes: 110900, Protocol: "v2-binary"}, Served: []bench.Level{lvl(1, 700, 1100), lvl(4, 900, 4000)}, Raw: raw})
	out := filepath.Join(dir, "BENCHMARKS.md")
	if err := run([]string{"-dir", dir, "-out", out}, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Protocols: served ÷ in-process ONNX Runtime",
		"| PaddleOCR cls | v1 JSON (/predict) | 1 | 288 KiB | 400.0/s | 1000.0/s | 0.40 | 2.00ms | 0 |",
		"| PaddleOCR cls | v1 JSON (/predict) | best | 288 KiB | 500.0/s (c=4) | 1400.0/s (c=4) | **0.36** | | |",
		"| PaddleOCR cls | v2 JSON tensors | | | not measured | | | | |",
		"| PaddleOCR cls | v2 binary tensors | 4 | 108 KiB | 900.0/s | 1400.0/s | 0.64 | 4.00ms | 0 |",
		"| PaddleOCR det | v2 binary tensors | | | not measured | | | | |",
		"| PaddleOCR cls, v2 binary tensors: best served throughput ≥ 0.95 × best in-process raw ONNX Runtime of the same run | 0.64 (served 900.0/s at concurrency 4, raw 1400.0/s at concurrency 4) | **missed** |",
		"| PaddleOCR det, v2 binary tensors: best served throughput ≥ 0.95 × best in-process raw ONNX Runtime of the same run | not measured | not checked |",
		"**Missed by 0.31: 900.0/s served against the 1330.0/s needed.**",
		"- v1 JSON (/predict): 0.36 (served 500.0/s at concurrency 4, raw 1400.0/s at concurrency 4)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	if t.Failed() {
		i := strings.Index(string(md), "## Protocols")
		t.Logf("%s", md[max(0, i):])
	}

	var empty bytes.Buffer
	writeProtocols(&empty, Protocols{})
	if !strings.Contains(empty.String(), "Not measured.") {
		t.Errorf("no runs: %s", empty.String())
	}
}
