package sched

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeProvider is an execution provider by name.
type fakeProvider string

func (p fakeProvider) Name() string        { return string(p) }
func (p fakeProvider) ORTName() string     { return string(p) + "ExecutionProvider" }
func (p fakeProvider) Platform() string    { return "test" }
func (p fakeProvider) Description() string { return "a provider of the tests" }

// fakeSession is a model with one input x and one output y, both
// [batch, cols] float32: y is x + 1000, row by row, so every row of a
// merged run's answer shows whose it was. It records the rows of each run.
// With a gate, each run waits for a token on it (or its context); fail
// makes every run fail with that error once let through. With pooled, the
// answer's storage comes from the tensor pools and the result is a
// core.Detacher, as ONNX Runtime's are.
type fakeSession struct {
	cols     int64
	gate     chan struct{}
	fail     error
	pooled   bool
	provider core.Provider
	// sizeMB is the model's size in /info.
	sizeMB float64
	// extraRow makes a merged run's answer one row longer than its input,
	// which cannot be split among the members.
	extraRow bool

	mu     sync.Mutex
	rows   []int64
	firsts []float32 // the first value of each run
	made   *float32  // the storage of the last pooled answer
	closed bool
}

func newFakeSession(cols int64) *fakeSession {
	return &fakeSession{cols: cols, provider: fakeProvider(core.CPUProvider)}
}

func (f *fakeSession) Info() core.ModelInfo {
	return core.ModelInfo{
		SizeMB:  f.sizeMB,
		Inputs:  []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, f.cols}, Required: true, Kind: core.KindTensor}},
		Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, f.cols}, Kind: core.KindTensor}},
	}
}

func (f *fakeSession) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, f.cols}, Required: true}}
}

func (f *fakeSession) Provider() core.Provider { return f.provider }

func (f *fakeSession) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeSession) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	f.mu.Lock()
	f.rows = append(f.rows, in[0].Shape[0])
	f.firsts = append(f.firsts, in[0].Data.([]float32)[0])
	f.mu.Unlock()
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", core.ErrCanceled, context.Cause(ctx))
		}
	}
	if f.fail != nil {
		return nil, f.fail
	}
	x := in[0].Data.([]float32)
	rows := in[0].Shape[0]
	if f.extraRow && rows > 1 {
		rows++
	}
	n := int(rows * f.cols)
	var y []float32
	if f.pooled {
		y = tensor.MakeSlice[float32](n)
		f.mu.Lock()
		f.made = &y[0]
		f.mu.Unlock()
	} else {
		y = make([]float32, n)
	}
	for i := range y {
		y[i] = x[i%len(x)] + 1000
	}
	out := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{rows, f.cols}, Data: y}
	if f.pooled {
		return &pooledResult{out: out}, nil
	}
	return core.NewResult([]*tensor.Tensor{out}), nil
}

// order is the first value of each run so far: whose run it was.
func (f *fakeSession) order() []float32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]float32(nil), f.firsts...)
}

// runs is the rows of each run so far.
func (f *fakeSession) runs() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.rows...)
}

// pooledResult is a result whose one output sits in storage from the
// tensor pools, like ONNX Runtime's sized outputs.
type pooledResult struct{ out *tensor.Tensor }

var _ core.Detacher = (*pooledResult)(nil)

func (r *pooledResult) Len() int                           { return 1 }
func (r *pooledResult) Tensor(int) (*tensor.Tensor, error) { return r.out, nil }
func (r *pooledResult) Value(int) (core.Value, error) {
	return core.Value{Kind: core.KindTensor, Tensor: r.out}, nil
}
func (r *pooledResult) Close()                   {}
func (r *pooledResult) Release()                 { tensor.RecycleAll(r.Detach()) }
func (r *pooledResult) Detach() []*tensor.Tensor { return []*tensor.Tensor{r.out} }

// row is a one-row request of the fake model whose every element is v.
func row(cols int64, v float32) []*tensor.Tensor {
	d := make([]float32, cols)
	for i := range d {
		d[i] = v
	}
	return []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, cols}, Data: d}}
}

// answerOf checks that res is the fake model's answer to row(cols, v).
func answerOf(res core.Result, cols int64, v float32) error {
	y, err := res.Tensor(0)
	if err != nil {
		return err
	}
	got := y.Data.([]float32)
	if len(y.Shape) != 2 || y.Shape[0] != 1 || y.Shape[1] != cols || int64(len(got)) != cols {
		return fmt.Errorf("answer of shape %v with %d elements, want [1 %d]", y.Shape, len(got), cols)
	}
	for i, g := range got {
		if g != v+1000 {
			return fmt.Errorf("element %d is %v, want %v: another request's row", i, g, v+1000)
		}
	}
	return nil
}

// bubble runs f in a synctest bubble, where time is a fake clock that
// moves only when every goroutine of the bubble is blocked, and fails t
// when the clock moved more than moves: a request that the scheduler
// should have handled at once waited on a timer instead (which on the
// fake clock would otherwise pass unseen).
func bubble(t *testing.T, moves time.Duration, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f(t)
		if d := time.Since(start); d > moves {
			t.Errorf("the bubble's clock moved %v, more than the %v the test lets pass: something waited on a timer", d, moves)
		}
	})
}

// eventually checks, once every goroutine of the test's synctest bubble is
// blocked, that cond holds: what the goroutines the test started were to
// do, they have done, with no polling and no bound in time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("%s: not so once every goroutine is blocked", what)
	}
}

// fakeOpener opens fake sessions: failAt makes the open of that number
// (1 for the first) fail.
type fakeOpener struct {
	newSession func() *fakeSession
	failAt     int
	mu         sync.Mutex
	opened     []*fakeSession
	threads    []int
}

var errOpen = errors.New("cannot open")

func (o *fakeOpener) Open(threads int) (core.Session, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.opened)+1 == o.failAt {
		return nil, errOpen
	}
	s := o.newSession()
	o.opened = append(o.opened, s)
	o.threads = append(o.threads, threads)
	return s, nil
}

func (o *fakeOpener) Placement(core.Provider) (core.Placement, error) { return nil, nil }
