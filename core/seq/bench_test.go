package seq

import (
	"context"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// cacheWidth is the elements of cache's state per sequence: 64 KiB of
// float32, the size of a small decoder's cache.
const cacheWidth = 16 << 10

// cache is a fake stateful model with a large state: x [B, 1], state
// [B, cacheWidth] → y [B, 1] = x + state[0], stateN = state + x.
type cache struct{}

func (cache) Info() core.ModelInfo {
	return core.ModelInfo{
		Inputs: []core.InputSpec{
			{Name: "x", Type: "float32", Shape: []int64{-1, 1}, DimNames: []string{"batch", ""}, Kind: core.KindTensor, Required: true},
			{Name: "state", Type: "float32", Shape: []int64{-1, cacheWidth}, DimNames: []string{"batch", ""}, Kind: core.KindTensor, Required: true},
		},
		Outputs: []core.OutputSpec{
			{Name: "y", Type: "float32", Shape: []int64{-1, 1}, DimNames: []string{"batch", ""}, Kind: core.KindTensor},
			{Name: "stateN", Type: "float32", Shape: []int64{-1, cacheWidth}, DimNames: []string{"batch", ""}, Kind: core.KindTensor},
		},
	}
}

func (cache) Specs() []tensor.Spec {
	return []tensor.Spec{
		{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 1}, Required: true},
		{Name: "state", DType: tensor.Float32, Shape: []int64{-1, cacheWidth}, Required: true},
	}
}

func (cache) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	x, st := in[0].Data.([]float32), in[1].Data.([]float32)
	b := len(x)
	y := make([]float32, b)
	next := make([]float32, len(st))
	for r := 0; r < b; r++ {
		y[r] = x[r] + st[r*cacheWidth]
		for k := r * cacheWidth; k < (r+1)*cacheWidth; k++ {
			next[k] = st[k] + x[r]
		}
	}
	return core.NewResult([]*tensor.Tensor{
		{DType: tensor.Float32, Shape: []int64{int64(b), 1}, Data: y},
		{DType: tensor.Float32, Shape: []int64{int64(b), cacheWidth}, Data: next},
	}), nil
}

// BenchmarkStep runs one sequence's steps, one at a time, over a model
// with a 64 KiB state: the store's own work per step (B/op: what it
// allocates besides the model's outputs).
func BenchmarkStep(b *testing.B) {
	m := cache{}
	s := New(Options{}, Fixed(m))
	defer s.Close(context.Background(), "benchmark over")
	if err := s.Use(m); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 1}, Data: []float32{1}}, nil}
	if _, err := s.Step(ctx, Step{ID: "a", Start: true, Inputs: in}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Step(ctx, Step{ID: "a", Inputs: in}); err != nil {
			b.Fatal(err)
		}
	}
}
