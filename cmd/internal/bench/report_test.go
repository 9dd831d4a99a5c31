package bench_test

import (
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func TestComputeRatios(t *testing.T) {
	lvl := func(c int, rps, p50 float64) bench.Level {
		return bench.Level{Concurrency: c, ThroughputRPS: rps, LatencyUS: bench.Latency{P50: p50}}
	}
	served := []bench.Level{lvl(1, 1000, 300), lvl(4, 3000, 500)}
	raw := []bench.Level{lvl(1, 4000, 100), lvl(4, 6000, 200)}
	codec := []bench.Level{lvl(4, 5000, 250)}
	rs := bench.ComputeRatios(served, raw, codec)
	if len(rs) != 2 {
		t.Fatalf("ratios = %+v", rs)
	}
	if *rs[0].ThroughputServedOverRaw != 0.25 || *rs[0].P50ServedMinusRawUS != 200 || rs[0].ThroughputServedOverRawCodec != nil {
		t.Fatalf("level 1: %+v", rs[0])
	}
	if *rs[1].ThroughputServedOverRaw != 0.5 || *rs[1].P50ServedMinusRawUS != 300 || *rs[1].ThroughputServedOverRawCodec != 0.6 || *rs[1].P50ServedMinusRawCodecUS != 250 {
		t.Fatalf("level 4: %+v", rs[1])
	}
	if got := bench.ComputeRatios(served, nil, nil); len(got) != 0 {
		t.Fatalf("without in-process levels: %+v", got)
	}
	if b := bench.Best(served); b == nil || b.Concurrency != 4 {
		t.Fatalf("best = %+v", b)
	}
	if bench.Best(nil) != nil {
		t.Fatal("best of nothing")
	}
}

func TestFormatMicros(t *testing.T) {
	tests := []struct {
		give float64
		want string
	}{
		{0, "-"}, {7.25, "7.2µs"}, {87.5, "87.5µs"}, {412.4, "412µs"}, {1934, "1.93ms"}, {2_410_000, "2.41s"},
	}
	for _, tt := range tests {
		if got := bench.FormatMicros(tt.give); got != tt.want {
			t.Errorf("FormatMicros(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
