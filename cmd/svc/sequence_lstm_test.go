package main_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

// TestTimeMajorLSTMSequences runs the steps of 8 sequences of an LSTM in
// the ONNX operator's time-first layout (x [time, batch, 3], y [time, 1,
// batch, 4]) through the sequence store with the real ONNX Runtime: the
// store joins them on the axis named "batch" (axis 1 of x, 2 of y), not on
// axis 0, and every step's y equals the model run alone with h and c
// carried by hand, bit for bit.
func TestTimeMajorLSTMSequences(t *testing.T) {
	t.Parallel()
	onnxrttest.Load(t)
	p, err := session.New(session.Options{Name: "lstm", File: model("lstm_time_major.onnx"), Runtime: config.Default().Runtime}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	g := &gated{Runner: p}
	store := seq.New(seq.Options{}, seq.Fixed(g))
	t.Cleanup(func() { store.Close(context.Background(), "test over") })
	if err := store.Use(p); err != nil {
		t.Fatal(err)
	}
	l := store.Layout()
	if got := fmt.Sprint(l.InAxis, l.OutAxis); got != "[1 1 1] [2 1 1]" {
		t.Fatalf("batch axes (inputs, outputs) %s, want [1 1 1] [2 1 1]", got)
	}

	const n, steps, frames = 8, 4, 2
	x := func(k, i int) *tensor.Tensor {
		d := make([]float32, frames*3)
		for j := range d {
			d[j] = float32(math.Sin(float64(100*k+10*i+j) * 0.7))
		}
		return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{frames, 1, 3}, Data: d}
	}
	// The reference: each sequence alone, h and c carried by hand.
	want := make([][][]float32, n)
	for k := range want {
		zero := func() *tensor.Tensor {
			return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 1, 4}, Data: make([]float32, 4)}
		}
		h, c := zero(), zero()
		for i := 0; i < steps; i++ {
			res, err := p.Predict(context.Background(), []*tensor.Tensor{x(k, i), h, c})
			if err != nil {
				t.Fatal(err)
			}
			var outs [3]*tensor.Tensor
			for j := range outs {
				o, err := res.Tensor(j)
				if err != nil {
					t.Fatal(err)
				}
				outs[j] = &tensor.Tensor{DType: o.DType, Shape: append([]int64(nil), o.Shape...), Data: append([]float32(nil), o.Data.([]float32)...)}
			}
			res.Close()
			want[k] = append(want[k], outs[0].Data.([]float32))
			h, c = outs[1], outs[2]
		}
	}

	before := store.Stats()
	for i := 0; i < steps; i++ {
		// The first step's run is held until the other 7 wait behind it,
		// so that they share the next run.
		entered, release := g.holdNext()
		got := make([][]float32, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs, err := store.Step(context.Background(), seq.Step{ID: fmt.Sprint("lstm", k), Start: i == 0, Inputs: []*tensor.Tensor{x(k, i), nil, nil}})
				if err != nil {
					errs[k] = err
					return
				}
				if s := fmt.Sprint(outs[0].Shape); s != fmt.Sprint([]int64{frames, 1, 1, 4}) {
					errs[k] = fmt.Errorf("y of shape %s", s)
					return
				}
				got[k] = outs[0].Data.([]float32)
			}()
			if k == 0 {
				<-entered
			}
		}
		for store.Waiting() < n-1 {
			runtime.Gosched() // synchronised on the store's queue, not on time
		}
		close(release)
		wg.Wait()
		for k := 0; k < n; k++ {
			if errs[k] != nil {
				t.Fatalf("step %d of sequence %d: %v", i, k, errs[k])
			}
			for j := range got[k] {
				if math.Float32bits(got[k][j]) != math.Float32bits(want[k][i][j]) {
					t.Fatalf("step %d of sequence %d: y %v, alone %v", i, k, got[k], want[k][i])
				}
			}
		}
	}
	after := store.Stats()
	if runs := after.Batched - before.Batched; runs != steps {
		t.Errorf("%d merged runs, want one per round (%d)", runs, steps)
	}
	if on, why := store.Batching(); !on {
		t.Errorf("batching switched off: %s", why)
	}
}
