package session_test

import (
	"context"
	"reflect"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

func floats(n int, f func(int) float32) *tensor.Tensor {
	d := make([]float32, n)
	for i := range d {
		d[i] = f(i)
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(n)}, Data: d}
}

// TestPooledOutputsRepeated runs vectors.onnx (Identity of each input) with
// large inputs, releasing each result before the next run, so that runs
// write into storage earlier runs gave back: every run must answer its
// own values.
func TestPooledOutputsRepeated(t *testing.T) {
	p := newPredictor(t, model("vectors.onnx"), config.Runtime{})
	const n = 50000 // 200 KB of float32, 400 KB of int64: pooled
	for run := 0; run < 6; run++ {
		in := make([]*tensor.Tensor, len(p.Specs()))
		for i, s := range p.Specs() {
			switch s.DType {
			case tensor.Float32:
				in[i] = floats(n, func(j int) float32 { return float32(j*run) + 0.5 })
			case tensor.Int64:
				d := make([]int64, n)
				for j := range d {
					d[j] = int64(j) << run
				}
				in[i] = &tensor.Tensor{DType: s.DType, Shape: []int64{n}, Data: d}
			default:
				in[i] = vectorOne(s.DType)
			}
		}
		res, err := p.Predict(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range in {
			got, err := res.Tensor(i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Data, in[i].Data) || !reflect.DeepEqual(got.Shape, in[i].Shape) {
				t.Fatalf("run %d: output %d is not its input", run, i)
			}
		}
		res.Release()
		tensor.RecycleAll(in)
	}
}

// vectorOne is a one-element tensor of dt.
func vectorOne(dt tensor.DType) *tensor.Tensor {
	var d any
	switch dt {
	case tensor.Float64:
		d = []float64{2}
	case tensor.Int8:
		d = []int8{-3}
	case tensor.Int16:
		d = []int16{4}
	case tensor.Int32:
		d = []int32{5}
	case tensor.Int64:
		d = []int64{6}
	case tensor.Uint8:
		d = []uint8{7}
	case tensor.Uint16, tensor.Float16, tensor.BFloat16:
		d = []uint16{0x3c00}
	case tensor.Uint32:
		d = []uint32{8}
	case tensor.Uint64:
		d = []uint64{9}
	case tensor.Bool:
		d = []bool{true}
	case tensor.String:
		d = []string{"hi"}
	default:
		d = []float32{1}
	}
	return &tensor.Tensor{DType: dt, Shape: []int64{1}, Data: d}
}

// TestMisnamedOutputDims runs a model whose declared output shape reuses
// the input's dimension name for a dimension twice as long (doubled), and
// whose nonzero output's shape depends on the input's values. Outputs
// sized before a run by name, or from an earlier run's shapes, make such
// runs fail; each is repeated with ONNX Runtime allocating, every answer
// is right, and the way of sizing that failed is dropped: by name for the
// model at the first failure (a warning), by earlier shapes for those input
// shapes, and for the model after four such failures (one info line).
func TestMisnamedOutputDims(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	p, err := session.New(session.Options{Name: "m", File: model("misnamed_dims.onnx"), Runtime: config.Runtime{}}, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	run := func(n, zeroEvery int) {
		t.Helper()
		x := floats(n, func(j int) float32 {
			if zeroEvery > 0 && j%zeroEvery == 0 {
				return 0
			}
			return float32(j%1000 + 1)
		})
		res, err := p.Predict(context.Background(), []*tensor.Tensor{x})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		defer res.Release()
		var got [3]*tensor.Tensor
		for i := range got {
			if got[i], err = res.Tensor(i); err != nil {
				t.Fatal(err)
			}
		}
		xs := x.Data.([]float32)
		doubled := append(append([]float32{}, xs...), xs...)
		var nonzero []int64
		for j, v := range xs {
			if v != 0 {
				nonzero = append(nonzero, int64(j))
			}
		}
		if !reflect.DeepEqual(got[0].Data, doubled) || !reflect.DeepEqual(got[0].Shape, []int64{int64(2 * n)}) {
			t.Fatalf("n=%d: doubled has shape %v", n, got[0].Shape)
		}
		if !reflect.DeepEqual(got[1].Data, xs) {
			t.Fatalf("n=%d: same is not x", n)
		}
		if !reflect.DeepEqual(got[2].Data, nonzero) || !reflect.DeepEqual(got[2].Shape, []int64{1, int64(len(nonzero))}) {
			t.Fatalf("n=%d, a zero every %d: nonzero has shape %v", n, zeroEvery, got[2].Shape)
		}
	}
	count := func(snippet string) int { return len(logs.FilterMessageSnippet(snippet).All()) }

	run(30000, 0) // sized by name: doubled fails; remembered after
	if count("do not follow its dimension names") != 1 {
		t.Fatalf("logs: %v", logs.All())
	}
	run(30000, 0) // sized from the first run's shapes
	run(30000, 2) // as many elements, half as many non-zero: a miss
	run(30000, 2) // those input shapes are no longer sized
	run(5, 0)
	if count("output shapes vary") != 0 {
		t.Fatalf("logs after one miss: %v", logs.All())
	}
	for n := 30001; n <= 30003; n++ {
		run(n, 0)
		run(n, 3)
	}
	run(40000, 0)
	run(40000, 4)
	if count("do not follow its dimension names") != 1 || count("output shapes vary") != 1 {
		t.Fatalf("logs after four misses: %v", logs.All())
	}
}
