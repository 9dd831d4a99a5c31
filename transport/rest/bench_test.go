package rest

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strconv"
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

// imageBody builds {"input": [[[[...]]]]} with 1×3×224×224 float32 values
// printed the way a typical client prints float32 (shortest 'g' form): most
// in [0,1), some normalized (mean/std) values that are negative or above 1.
func imageBody(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	b := []byte(`{"input": [`)
	for c := 0; c < 3; c++ {
		if c > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '[')
		for y := 0; y < 224; y++ {
			if y > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '[')
			for x := 0; x < 224; x++ {
				if x > 0 {
					b = append(b, ", "...)
				}
				v := r.Float32()
				if r.IntN(4) == 0 {
					v = (v - 0.485) / 0.229
				}
				b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

var imageSpecs = []tensor.Spec{{Name: "input", DType: tensor.Float32, Shape: []int64{-1, 3, 224, 224}, Required: true}}

type benchCase struct {
	name  string
	body  []byte
	specs []tensor.Spec
}

func decodeCases() []benchCase {
	return []benchCase{
		{"float32_1x3x224x224", imageBody(1), imageSpecs},
		{"classifier", []byte(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`),
			[]tensor.Spec{{Name: "input", DType: tensor.Float32, Shape: []int64{-1, 4}, Required: true}}},
		{"multi_input", []byte(`{"input_ids": [[101, 2023, 2003, 1037, 3231, 102, 0, 0]], "attention_mask": [[1, 1, 1, 1, 1, 1, 0, 0]], "flags": [true, false, true], "text": ["hello", "w\u00f6rld \"quoted\""], "temperature": 0.7}`),
			[]tensor.Spec{
				{Name: "input_ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true},
				{Name: "attention_mask", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true},
				{Name: "flags", DType: tensor.Bool, Shape: []int64{-1}},
				{Name: "text", DType: tensor.String, Shape: []int64{-1}},
				{Name: "temperature", DType: tensor.Float32, Shape: []int64{}},
			}},
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range decodeCases() {
		b.Run(c.name, func(b *testing.B) {
			if _, err := DecodeRequest(c.body, c.specs); err != nil {
				b.Fatal(err)
			}
			loop(b, len(c.body), func() {
				if _, err := DecodeRequest(c.body, c.specs); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkDecodeBaselineStdlibAny is what a straightforward handler does:
// json.Unmarshal into map[string]any (it does not even build the tensors).
func BenchmarkDecodeBaselineStdlibAny(b *testing.B) {
	for _, c := range decodeCases() {
		b.Run(c.name, func(b *testing.B) {
			loop(b, len(c.body), func() {
				var m map[string]any
				if err := json.Unmarshal(c.body, &m); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
