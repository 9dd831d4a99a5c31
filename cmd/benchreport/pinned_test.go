package main

import (
	"math"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func TestPinnedRatio(t *testing.T) {
	d, err := readData(perfDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pinned) != 2 {
		t.Fatalf("%d pinned models, want cls and det", len(d.Pinned))
	}
	m := d.Pinned.model("det")
	ratio, s, raw, ok := m.ratio(bench.ProtocolV2Binary)
	// The fixture: the best raw repetition on CPU 0 and the faster of the
	// two served levels.
	if !ok || s.Concurrency != 16 || math.Abs(raw-105.0) > 1 || math.Abs(ratio-s.ThroughputRPS/raw) > 1e-12 {
		t.Fatalf("det v2 binary: ratio %v, served %+v, raw %v, ok %v", ratio, s, raw, ok)
	}
	if got := pinnedSentence(d, "tiny", bench.ProtocolV1); got != "" {
		t.Errorf("a sentence for a model not measured: %q", got)
	}
	if got := pinnedSentence(Data{}, "cls", bench.ProtocolV1); got != "" {
		t.Errorf("a sentence without the runs: %q", got)
	}
}
