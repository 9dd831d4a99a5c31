package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
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

// TestModelObserverSkipsWarmUp: the runtime's reports reach the observer
// only once the model is ready; requests count in flight until they end.
func TestModelObserverSkipsWarmUp(t *testing.T) {
	rec := &recorder{}
	m := core.NewModel("m")
	m.SetObserver(rec)
	m.Start(func() (core.Loaded, error) { return core.Loaded{}, nil }, nil, func(core.Runner) error {
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

// TestModelCounts: the run counters the scheduler's Go-processor tuner
// reads count the runs reported once the model is ready, and the requests
// ended are what its memory reclaimer reads.
func TestModelCounts(t *testing.T) {
	m := core.NewModel("m")
	m.Observer().Executed(1, time.Second) // loading: the warm-up run
	if r, d := m.RunCounts(); r != 0 || d != 0 {
		t.Fatalf("runs counted while loading: %d, %v", r, time.Duration(d))
	}
	if n, last := m.Ended(); n != 0 || !last.IsZero() {
		t.Fatalf("Ended() = %d, %v before any request", n, last)
	}
	m.Start(func() (core.Loaded, error) { return core.Loaded{}, nil }, nil, nil, nil)
	<-m.Done()
	m.Observer().Executed(4, 3*time.Millisecond)
	m.Observer().Executed(1, time.Millisecond)
	if r, d := m.RunCounts(); r != 2 || time.Duration(d) != 4*time.Millisecond {
		t.Fatalf("RunCounts() = %d, %v; want 2, 4ms", r, time.Duration(d))
	}
	before := time.Now()
	m.EndRequest(m.BeginRequest(), core.OutcomeSuccess)
	m.EndRequest(m.BeginRequest(), core.OutcomeInference)
	if n, last := m.Ended(); n != 2 || last.Before(before) {
		t.Fatalf("Ended() = %d, %v; want 2, at or after %v", n, last, before)
	}
}
