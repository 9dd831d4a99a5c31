package seqroute

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a stateful model: y = x + state, stateN = state + x.
type counter struct{}

func (counter) Info() core.ModelInfo {
	return core.ModelInfo{
		Inputs: []core.InputSpec{
			{Name: "x", Type: "float32", Shape: []int64{-1, 1}, Kind: core.KindTensor, Required: true},
			{Name: "state", Type: "float32", Shape: []int64{-1, 1}, Kind: core.KindTensor, Required: true},
		},
		Outputs: []core.OutputSpec{
			{Name: "y", Type: "float32", Shape: []int64{-1, 1}, Kind: core.KindTensor},
			{Name: "stateN", Type: "float32", Shape: []int64{-1, 1}, Kind: core.KindTensor},
		},
	}
}

func (counter) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 1}, Required: true}, {Name: "state", DType: tensor.Float32, Shape: []int64{-1, 1}, Required: true}}
}

func (counter) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	x, s := in[0].Data.([]float32), in[1].Data.([]float32)
	y := make([]float32, len(x))
	for i := range x {
		if x[i] < 0 {
			return nil, &core.InputError{Input: "x", Message: "x must not be negative"}
		}
		y[i] = x[i] + s[i]
	}
	return core.NewResult([]*tensor.Tensor{{DType: tensor.Float32, Shape: in[0].Shape, Data: y}, {DType: tensor.Float32, Shape: in[0].Shape, Data: append([]float32(nil), y...)}}), nil
}

func x(v float32) []*tensor.Tensor {
	return []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 1}, Data: []float32{v}}, nil}
}

// TestForward runs a sequence held by worker 2 from worker 1: the state
// is kept in worker 2, and its refusals arrive typed; a worker that is not
// answering is an error that says so.
func TestForward(t *testing.T) {
	dir, err := os.MkdirTemp("", "seq")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	m := counter{}
	store := seq.New(seq.Options{MaxActive: 1}, seq.Fixed(m))
	defer store.Close(context.Background(), "test over")
	if err := store.Use(m); err != nil {
		t.Fatal(err)
	}
	srv, err := Serve(dir, 2, store)
	if err != nil {
		t.Fatal(err)
	}
	r := New(dir, 1, 2)
	ctx := context.Background()
	for i, want := range []float32{1, 3, 6} {
		outs, err := r.Forward(ctx, 2, seq.Step{ID: "a", Start: i == 0, Inputs: x(float32(i + 1))})
		if err != nil {
			t.Fatal(err)
		}
		if got := outs[0].Data.([]float32)[0]; got != want {
			t.Errorf("step %d: %v, want %v", i, got, want)
		}
	}
	var (
		unknown *seq.UnknownError
		limit   *seq.LimitError
		input   *core.InputError
		closed  *seq.ClosedError
	)
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "b", Inputs: x(1)}); !errors.As(err, &unknown) || unknown.ID != "b" {
		t.Errorf("unknown: %v", err)
	}
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "b", Start: true, Inputs: x(1)}); !errors.As(err, &limit) || limit.Max != 1 {
		t.Errorf("limit: %v", err)
	}
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "a", Inputs: x(-1)}); !errors.As(err, &input) || input.Input != "x" {
		t.Errorf("input error: %v", err)
	}
	if err := r.ForwardEnd(ctx, 2, "a", "gone for good"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "a", Inputs: x(1)}); err == nil || !strings.Contains(err.Error(), "gone for good") {
		t.Errorf("after ForwardEnd: %v", err)
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "a", Inputs: x(1)}); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "worker 2, which is not answering: the worker died") {
		t.Errorf("dead worker: %v", err)
	}
	if _, err := r.Forward(ctx, 2, seq.Step{ID: "a", Start: true, Inputs: x(1)}); !errors.As(err, &closed) || !strings.Contains(err.Error(), "worker 2") {
		t.Errorf("start on a dead worker: %v", err)
	}
	r.client.CloseIdleConnections()
}

func TestOwner(t *testing.T) {
	r := New("", 1, 3)
	seen := map[int]bool{}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		w, local := r.Owner(id)
		if w < 1 || w > 3 || local != (w == 1) {
			t.Fatalf("Owner(%q) = %d, %v", id, w, local)
		}
		if again, _ := r.Owner(id); again != w {
			t.Fatalf("Owner(%q) changed", id)
		}
		seen[w] = true
	}
	if len(seen) != 3 {
		t.Errorf("8 ids went to workers %v only", seen)
	}
}

// slow is counter whose runs of x = 2 say so on entered and wait for
// gate.
type slow struct {
	counter
	entered chan struct{}
	gate    chan struct{}
}

func (m *slow) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	if in[0].Data.([]float32)[0] == 2 {
		m.entered <- struct{}{}
		<-m.gate
	}
	return m.counter.Predict(ctx, in)
}

// TestForwardCanceled: a forwarded step whose request ends (its deadline,
// its client gone) while the owner runs it fails with core.ErrCanceled and
// the request's cause, as a step run here does, not as a dead worker: the
// sequence lives on in its worker.
func TestForwardCanceled(t *testing.T) {
	tests := []struct {
		name  string
		start bool
		cause error
	}{
		{name: "deadline", cause: &core.TimeoutError{After: time.Second, Requested: true}},
		{name: "client gone", cause: context.Canceled},
		{name: "deadline of a start", start: true, cause: &core.TimeoutError{After: time.Second, Requested: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			m := &slow{entered: make(chan struct{}, 1), gate: make(chan struct{})}
			store := seq.New(seq.Options{}, seq.Fixed(m))
			defer store.Close(context.Background(), "test over")
			if err := store.Use(m); err != nil {
				t.Fatal(err)
			}
			srv, err := Serve(dir, 2, store)
			if err != nil {
				t.Fatal(err)
			}
			r := New(dir, 1, 2)
			defer r.client.CloseIdleConnections()
			defer func() {
				if err := srv.Close(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			if !tt.start {
				if _, err := r.Forward(context.Background(), 2, seq.Step{ID: "a", Start: true, Inputs: x(1)}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := r.Forward(ctx, 2, seq.Step{ID: "a", Start: tt.start, Inputs: x(2)})
				done <- err
			}()
			<-m.entered
			cancel(tt.cause)
			err = <-done
			var unknown *seq.UnknownError
			var closed *seq.ClosedError
			if !errors.Is(err, core.ErrCanceled) || !errors.Is(err, tt.cause) || errors.As(err, &unknown) || errors.As(err, &closed) {
				t.Errorf("err = %v, want core.ErrCanceled with the cause %v", err, tt.cause)
			}
			close(m.gate)
			if _, err := r.Forward(context.Background(), 2, seq.Step{ID: "a", Inputs: x(1)}); err != nil {
				t.Errorf("the sequence after a canceled step: %v", err)
			}
		})
	}
}

// TestServeWithoutSocket: a socket that cannot be made (its folder gone)
// is an error that says which, not a worker that never answers.
func TestServeWithoutSocket(t *testing.T) {
	dir := t.TempDir() + "/gone"
	srv, err := Serve(dir, 1, nil)
	if err == nil {
		_ = srv.Close(context.Background())
		t.Fatal("Serve made a socket in a missing folder")
	}
	if want := "sequence socket: listen unix " + SocketPath(dir, 1); !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
