package seq

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// vad is a fake stateful model shaped as Silero VAD v5: input [B, n],
// state [2, B, 4], sr scalar → output [B, 1], stateN [2, B, 4]. Each row's
// output is the sum of its input plus its state's first element plus sr;
// its next state is its state plus the sum of its input, so a state that
// leaks between rows or steps shows. It records the rows of each run; with
// a gate, the first run waits for it.
type vad struct {
	mu      sync.Mutex
	runs    []int
	gate    chan struct{}
	entered chan struct{}
	// wrongRows makes a merged run answer one row too few.
	wrongRows bool
	// failMerged makes a run of several rows fail.
	failMerged bool
}

func (v *vad) Info() core.ModelInfo {
	return core.ModelInfo{
		Inputs: []core.InputSpec{
			{Name: "input", Type: "float32", Shape: []int64{-1, -1}, Kind: core.KindTensor, Required: true},
			{Name: "state", Type: "float32", Shape: []int64{2, -1, 4}, Kind: core.KindTensor, Required: true},
			{Name: "sr", Type: "int64", Shape: []int64{}, Kind: core.KindTensor, Required: true},
		},
		Outputs: []core.OutputSpec{
			{Name: "output", Type: "float32", Shape: []int64{-1, 1}, Kind: core.KindTensor},
			{Name: "stateN", Type: "float32", Shape: []int64{-1, -1, -1}, Kind: core.KindTensor},
		},
	}
}

func (v *vad) Specs() []tensor.Spec {
	return []tensor.Spec{
		{Name: "input", DType: tensor.Float32, Shape: []int64{-1, -1}, Required: true},
		{Name: "state", DType: tensor.Float32, Shape: []int64{2, -1, 4}, Required: true},
		{Name: "sr", DType: tensor.Int64, Shape: []int64{}, Required: true},
	}
}

func (v *vad) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	x, st, sr := in[0], in[1], in[2]
	b := int(x.Shape[0])
	if int(st.Shape[1]) != b {
		return nil, &core.InferenceError{Err: errors.New("batch of input and state differ")}
	}
	v.mu.Lock()
	first := len(v.runs) == 0
	v.runs = append(v.runs, b)
	v.mu.Unlock()
	if first && v.gate != nil {
		close(v.entered)
		<-v.gate
	}
	if v.failMerged && b > 1 {
		return nil, &core.InferenceError{Err: errors.New("this model runs one row at a time")}
	}
	n := int(x.Shape[1])
	xs, ss := x.Data.([]float32), st.Data.([]float32)
	out := make([]float32, b)
	next := make([]float32, len(ss))
	for r := 0; r < b; r++ {
		var sum float32
		for _, e := range xs[r*n : (r+1)*n] {
			sum += e
		}
		out[r] = sum + ss[r*4] + float32(sr.Data.([]int64)[0])
		for layer := 0; layer < 2; layer++ {
			for k := 0; k < 4; k++ {
				i := (layer*b+r)*4 + k
				next[i] = ss[i] + sum
			}
		}
	}
	outShape := []int64{int64(b), 1}
	if v.wrongRows && b > 1 {
		out, outShape = out[:b-1], []int64{int64(b - 1), 1}
	}
	return core.NewResult([]*tensor.Tensor{
		{DType: tensor.Float32, Shape: outShape, Data: out},
		{DType: tensor.Float32, Shape: []int64{2, int64(b), 4}, Data: next},
	}), nil
}

func (v *vad) runSizes() []int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]int(nil), v.runs...)
}

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newStore is a prepared store over m with a clock the test moves and a
// reaper woken by ticks only.
func newStore(t *testing.T, m core.Runner, o Options) (*Store, *clock, chan time.Time) {
	t.Helper()
	c := &clock{now: time.Unix(1_000_000, 0)}
	ticks := make(chan time.Time)
	o.Now, o.Ticks = c.Now, ticks
	s := New(o, Fixed(m))
	t.Cleanup(func() {
		if err := s.Close(context.Background(), "test over"); err != nil {
			t.Error(err)
		}
	})
	if err := s.Use(m); err != nil {
		t.Fatal(err)
	}
	return s, c, ticks
}

func chunk(vals ...float32) []*tensor.Tensor {
	return []*tensor.Tensor{
		{DType: tensor.Float32, Shape: []int64{1, int64(len(vals))}, Data: vals},
		nil,
		{DType: tensor.Int64, Shape: []int64{}, Data: []int64{16000}},
	}
}

func prob(t *testing.T, outs []*tensor.Tensor) float32 {
	t.Helper()
	return outs[0].Data.([]float32)[0]
}
