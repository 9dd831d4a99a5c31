package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
)

// recorder is a RunObserver that keeps what it is told.
type recorder struct {
	mu         sync.Mutex
	outcomes   []core.Outcome
	queued     []time.Duration
	executions int
	inferences int
}

func (r *recorder) RequestDone(o core.Outcome, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes = append(r.outcomes, o)
}

func (r *recorder) Queued(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queued = append(r.queued, d)
}

func (r *recorder) Executed(n int, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.executions++
	r.inferences += n
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		give error
		want string
	}{
		{nil, "success"},
		{&core.NotReadyError{Model: "m", State: core.StateLoading}, "not_ready"},
		{fmt.Errorf("wrapped: %w", &core.TimeoutError{After: time.Second}), "timeout"},
		{fmt.Errorf("%w: %w", core.ErrCanceled, context.Canceled), "canceled"},
		{&core.InferenceError{Err: errors.New("boom")}, "inference"},
		{errors.New("unexpected"), "inference"},
	}
	for _, tt := range tests {
		if got := core.OutcomeOf(tt.give).String(); got != tt.want {
			t.Errorf("OutcomeOf(%v) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

// TestObserverCountsRuns sends requests of several rows through a pool
// alone and through a batcher: every request is reported queued once, every
// execution once, and the inferences add up to the rows sent.
func TestObserverCountsRuns(t *testing.T) {
	for _, batching := range []bool{false, true} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			rec := &recorder{}
			p, err := core.NewPredictor(core.Options{Name: "m", File: model("classifier.onnx"), Observer: rec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			pool, _ := core.NewPool(p)
			var r core.Runner = pool
			var b *core.Batcher
			if batching {
				b, err = core.NewBatcher(pool, core.BatchOptions{MaxBatchSize: 8, Slots: 1, Observer: rec, Fixed: true})
				if err != nil {
					t.Fatal(err)
				}
				r = b
			} else {
				pool.SetObserver(rec)
			}
			const n = 16
			bodies := make([]string, n)
			rows := 0
			for i := range bodies {
				if i%4 == 0 {
					bodies[i] = `{"input": [[1, 2, 3, 4], [5, 6, 7, 8], [0, 0, 0, 1]]}`
					rows += 3
				} else {
					bodies[i] = fmt.Sprintf(`{"input": [[%d, 1, 2, 3]]}`, i)
					rows++
				}
			}
			rounds := 0
			for rounds < 20 {
				concurrently(t, r, bodies)
				rounds++
				if b == nil || b.Stats().MergedRuns > 0 {
					break
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.queued) != n*rounds {
				t.Errorf("queued reported %d times, want %d", len(rec.queued), n*rounds)
			}
			if rec.inferences != rows*rounds {
				t.Errorf("inferences = %d, want %d", rec.inferences, rows*rounds)
			}
			wantExec := n * rounds
			if b != nil {
				wantExec = int(b.Stats().Runs)
				if b.Stats().MergedRuns == 0 {
					t.Fatal("no run was merged")
				}
			}
			if rec.executions != wantExec {
				t.Errorf("executions = %d, want %d", rec.executions, wantExec)
			}
			if !batching {
				for _, d := range rec.queued {
					if d != 0 {
						t.Fatalf("a pool reported a wait of %s", d)
					}
				}
			}
		})
	}
}

// TestModelObserverSkipsWarmUp: the runtime's reports reach the observer
// only once the model is ready; requests count in flight until they end.
func TestModelObserverSkipsWarmUp(t *testing.T) {
	rec := &recorder{}
	m := core.NewModel("m")
	m.SetObserver(rec)
	p := newPredictor(t, model("classifier.onnx"), config.Runtime{})
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: p}, nil }, nil, func(core.Runner) error {
		m.Observer().Executed(1, time.Millisecond)
		m.Observer().Queued(time.Millisecond)
		return nil
	}, nil)
	<-m.Done()
	if rec.executions != 0 || len(rec.queued) != 0 {
		t.Fatalf("warm-up counted: %d executions, %d queued", rec.executions, len(rec.queued))
	}
	m.Observer().Executed(4, time.Millisecond)
	m.Observer().Queued(0)
	if rec.executions != 1 || rec.inferences != 4 || len(rec.queued) != 1 {
		t.Fatalf("after ready: %d executions, %d inferences, %d queued", rec.executions, rec.inferences, len(rec.queued))
	}

	start := m.BeginRequest()
	if got := m.InFlight(); got != 1 {
		t.Fatalf("in flight = %d, want 1", got)
	}
	m.EndRequest(start, core.OutcomeTimeout)
	if got := m.InFlight(); got != 0 {
		t.Fatalf("in flight = %d after the end, want 0", got)
	}
	if len(rec.outcomes) != 1 || rec.outcomes[0] != core.OutcomeTimeout {
		t.Fatalf("outcomes = %v", rec.outcomes)
	}
}
