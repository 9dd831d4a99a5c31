package tensorjson

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// loop runs f b.N times (via b.Loop) and also reports throughput by the
// thread's CPU time, which is steadier than wall-clock time when other
// processes compete for the cores.
func loop(b *testing.B, bytes int, f func()) {
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := threadCPUTime()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if t1, ok1 := threadCPUTime(); ok && ok1 && t1 > t0 {
		b.ReportMetric(float64(bytes)*float64(n)/(t1-t0).Seconds()/1e6, "cpu-MB/s")
	}
}

func encodeCases() []struct {
	name string
	t    *tensor.Tensor
} {
	r := rand.New(rand.NewPCG(7, 7))
	big := make([]float32, 1000*1000)
	for i := range big {
		big[i] = r.Float32()*2 - 1
	}
	logits := make([]float32, 10)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	ids := make([]int64, 4096)
	for i := range ids {
		ids[i] = r.Int64N(50000)
	}
	return []struct {
		name string
		t    *tensor.Tensor
	}{
		{"float32_1x1000x1000", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 1000, 1000}, Data: big}},
		{"float32_1x10", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 10}, Data: logits}},
		{"int64_8x512", &tensor.Tensor{DType: tensor.Int64, Shape: []int64{8, 512}, Data: ids}},
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range encodeCases() {
		b.Run(c.name, func(b *testing.B) {
			buf := AppendJSON(nil, c.t)
			loop(b, len(buf), func() { buf = AppendJSON(buf[:0], c.t) })
		})
	}
}

// BenchmarkEncodeBaselineStdlib marshals the same data, as a flat slice
// (encoding/json has no tensor shape), with json.Marshal.
func BenchmarkEncodeBaselineStdlib(b *testing.B) {
	for _, c := range encodeCases() {
		b.Run(c.name, func(b *testing.B) {
			buf := AppendJSON(nil, c.t)
			loop(b, len(buf), func() {
				if _, err := json.Marshal(c.t.Data); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
