package sched

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// rows2 is a request of two rows of v: under the batcher of oneSlot
// (MaxBatchSize 3) two of them never merge, so each runs on its own and
// the order of the runs is the order of the queue.
func rows2(cols int64, v float32) []*tensor.Tensor {
	d := make([]float32, 2*cols)
	for i := range d {
		d[i] = v
	}
	return []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{2, cols}, Data: d}}
}

// oneSlot is a runner with a single run slot over f, and how many
// requests wait in its queue.
type oneSlot struct {
	name   string
	runner func(t *testing.T, f *fakeSession) (core.Runner, func() int)
}

var oneSlotRunners = []oneSlot{
	{"pool", func(t *testing.T, f *fakeSession) (core.Runner, func() int) {
		p, err := NewPool(f)
		if err != nil {
			t.Fatal(err)
		}
		p.SetObserver(nil)
		p.Bound(1)
		return p, p.Waiting
	}},
	{"batcher", func(t *testing.T, f *fakeSession) (core.Runner, func() int) {
		b, _ := batcherOverPool(t, f, true, BatchOptions{MaxBatchSize: 3, Slots: 1, Fixed: true})
		return b, b.Queued
	}},
}

// batcherOverPool is a batcher with o over a pool of f, the pool bounded
// to one run at a time when bound.
func batcherOverPool(t *testing.T, f *fakeSession, bound bool, o BatchOptions) (*Batcher, *Pool) {
	t.Helper()
	p, err := NewPool(f)
	if err != nil {
		t.Fatal(err)
	}
	if bound {
		p.Bound(1)
	}
	b, err := NewBatcher(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return b, p
}

// TestPriorityOvertakesQueuedWork: with the one slot held by a run, bulk
// requests then an interactive one queue; once the slot frees, the
// interactive request runs first, then the bulk ones in their order.
func TestPriorityOvertakesQueuedWork(t *testing.T) {
	for _, tc := range oneSlotRunners {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, 0, func(t *testing.T) {
				f := newFakeSession(2)
				f.gate = make(chan struct{})
				r, waiting := tc.runner(t, f)
				busy := send(context.Background(), r, rows2(2, 1))
				eventually(t, "the run that holds the slot", func() bool { return len(f.runs()) == 1 })

				bulk1 := send(context.Background(), r, rows2(2, 2))
				eventually(t, "the first bulk request queues", func() bool { return waiting() == 1 })
				bulk2 := send(context.Background(), r, rows2(2, 3))
				eventually(t, "the second bulk request queues", func() bool { return waiting() == 2 })
				urgent := send(core.WithPriority(context.Background(), core.PriorityHigh), r, rows2(2, 4))
				eventually(t, "the interactive request queues", func() bool { return waiting() == 3 })

				close(f.gate)
				for _, c := range []<-chan answer{busy, urgent, bulk1, bulk2} {
					a := <-c
					if a.err != nil {
						t.Fatal(a.err)
					}
					a.res.Release()
				}
				if got, want := f.order(), []float32{1, 4, 2, 3}; !slices.Equal(got, want) {
					t.Fatalf("runs in the order %v, want %v (the interactive request first)", got, want)
				}
			})
		})
	}
}

// TestExpiredWhileQueuedNeverRuns: a request whose own timeout passes
// while it waits for the held slot ends with a TimeoutError and is never
// run; the requests behind it still are.
func TestExpiredWhileQueuedNeverRuns(t *testing.T) {
	for _, tc := range oneSlotRunners {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, time.Nanosecond, func(t *testing.T) {
				f := newFakeSession(2)
				f.gate = make(chan struct{})
				r, waiting := tc.runner(t, f)
				busy := send(context.Background(), r, rows2(2, 1))
				eventually(t, "the run that holds the slot", func() bool { return len(f.runs()) == 1 })

				// The timeout ends the request while it is queued: its answer
				// cannot come before, since the slot is held until the gate
				// opens.
				ctx, cancel := core.WithRequestTimeout(context.Background(), time.Nanosecond, time.Hour)
				defer cancel()
				expired := send(ctx, r, rows2(2, 2))
				a := <-expired
				var te *core.TimeoutError
				if !errors.As(a.err, &te) || !te.Requested {
					t.Fatalf("expired request: %v, want the request's TimeoutError", a.err)
				}
				if got := core.OutcomeOf(a.err); got != core.OutcomeTimeout {
					t.Fatalf("outcome %v, want timeout", got)
				}
				later := send(context.Background(), r, rows2(2, 3))
				eventually(t, "the next request queues", func() bool { return waiting() == 1 })
				close(f.gate)
				for _, c := range []<-chan answer{busy, later} {
					a := <-c
					if a.err != nil {
						t.Fatal(a.err)
					}
					a.res.Release()
				}
				if got, want := f.order(), []float32{1, 3}; !slices.Equal(got, want) {
					t.Fatalf("runs %v, want %v (the expired request never runs)", got, want)
				}
			})
		})
	}
}

// TestBatcherDropsExpiredAtDispatch: a queued request whose context has
// ended when the slot frees is dropped by the dispatcher, unrun, even if
// its own goroutine has not yet taken it off the queue.
func TestBatcherDropsExpiredAtDispatch(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		f.gate = make(chan struct{})
		b, _ := batcherOverPool(t, f, false, BatchOptions{MaxBatchSize: 3, Slots: 1, Fixed: true})
		busy := send(context.Background(), b, rows2(2, 1))
		eventually(t, "the run that holds the slot", func() bool { return len(f.runs()) == 1 })
		// Queued by hand, with a context that has already ended, as if its
		// goroutine were slow to notice.
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&core.TimeoutError{After: time.Millisecond, Requested: true})
		q := &pending{ctx: ctx, inputs: rows2(2, 2), rows: 2, key: shapeKey(rows2(2, 2)), since: time.Now(),
			lead: make(chan []*pending, 1), done: make(chan batchResult, 1)}
		b.mu.Lock()
		b.enqueueLocked(q)
		b.mu.Unlock()
		close(f.gate)
		if a := <-busy; a.err != nil {
			t.Fatal(a.err)
		} else {
			a.res.Release()
		}
		if r := <-q.done; !r.expired {
			t.Fatalf("the expired request got %+v, want dropped", r)
		}
		if got := f.order(); !slices.Equal(got, []float32{1}) {
			t.Fatalf("runs %v, want only the first", got)
		}
		if n := b.Queued(); n != 0 {
			t.Fatalf("%d left queued", n)
		}
	})
}

// stepRecorder is a core.RequestTrace that keeps the steps it is told of.
type stepRecorder struct {
	mu    sync.Mutex
	steps []recordedStep
}

type recordedStep struct {
	step core.Step
	rows int
	ok   bool // end is not before start
}

func (s *stepRecorder) Step(st core.Step, start, end time.Time, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, recordedStep{st, rows, !end.Before(start)})
}

// got is the steps in the order of the request's work (a member of a
// merged run hears of its wait after the run).
func (s *stepRecorder) got() []recordedStep {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]recordedStep(nil), s.steps...)
	slices.SortStableFunc(out, func(a, b recordedStep) int { return int(a.step) - int(b.step) })
	return out
}

// TestSchedulerTracesQueueAndRun: each request's trace is told of its wait
// for a session and of the run it was part of, with the run's rows: a
// merged run's rows are all its members'.
func TestSchedulerTracesQueueAndRun(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		f.gate = make(chan struct{})
		b, p := batcherOverPool(t, f, true, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
		first, second, third := &stepRecorder{}, &stepRecorder{}, &stepRecorder{}
		busy := send(core.WithRequestTrace(context.Background(), first), b, row(2, 1))
		eventually(t, "the run that holds the slot", func() bool { return len(f.runs()) == 1 })
		m1 := send(core.WithRequestTrace(context.Background(), second), b, row(2, 2))
		m2 := send(core.WithRequestTrace(context.Background(), third), b, rows2(2, 3))
		eventually(t, "two requests queue", func() bool { return b.Queued() == 2 })
		close(f.gate)
		for _, c := range []<-chan answer{busy, m1, m2} {
			a := <-c
			if a.err != nil {
				t.Fatal(a.err)
			}
			a.res.Release()
		}
		cases := []struct {
			name string
			rec  *stepRecorder
			want []recordedStep
		}{
			{"alone", first, []recordedStep{{core.StepQueue, 0, true}, {core.StepInfer, 1, true}}},
			{"merged, one row", second, []recordedStep{{core.StepQueue, 0, true}, {core.StepInfer, 3, true}}},
			{"merged, two rows", third, []recordedStep{{core.StepQueue, 0, true}, {core.StepInfer, 3, true}}},
		}
		for _, c := range cases {
			if got := c.rec.got(); !slices.Equal(got, c.want) {
				t.Errorf("%s: steps %+v, want %+v", c.name, got, c.want)
			}
		}

		// The pool in front traces the same way.
		rec := &stepRecorder{}
		p.SetObserver(nil)
		res, err := p.Predict(core.WithRequestTrace(context.Background(), rec), rows2(2, 5))
		if err != nil {
			t.Fatal(err)
		}
		res.Release()
		if got, want := rec.got(), []recordedStep{{core.StepQueue, 0, true}, {core.StepInfer, 2, true}}; !slices.Equal(got, want) {
			t.Errorf("pool: steps %+v, want %+v", got, want)
		}
	})
}

// TestBatcherQueueDelayCountsFromOldest: max_queue_delay counts from the
// longest-queued request, not from the head of the queue. A high request
// that arrives once a normal one has waited out the delay goes ahead of
// it and both leave at once, merged; they do not wait the delay again
// from the high request's arrival (the run would come only when the
// hour-long delay had passed, long after eventually gives up).
func TestBatcherQueueDelayCountsFromOldest(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		b, _ := batcherOverPool(t, f, false, BatchOptions{MaxBatchSize: 8, MaxQueueDelay: time.Hour, Slots: 1, Fixed: true})
		// Queued by hand as if it had come two hours ago, its delay's timer
		// about to fire.
		old := &pending{ctx: context.Background(), inputs: row(2, 1), rows: 1, key: shapeKey(row(2, 1)),
			since: time.Now().Add(-2 * time.Hour), lead: make(chan []*pending, 1), done: make(chan batchResult, 1)}
		b.mu.Lock()
		b.enqueueLocked(old)
		b.mu.Unlock()

		urgent := send(core.WithPriority(context.Background(), core.PriorityHigh), b, row(2, 2))
		eventually(t, "the merged run", func() bool { return len(f.runs()) == 1 })
		if got := f.runs(); !slices.Equal(got, []int64{2}) {
			t.Fatalf("runs %v, want one run of both requests", got)
		}
		if got := f.order(); !slices.Equal(got, []float32{2}) {
			t.Fatalf("the run began with %v, want the high request first", got)
		}
		a := <-urgent
		if a.err != nil || answerOf(a.res, 2, 2) != nil {
			t.Fatalf("high request: %v %v", a.err, answerOf(a.res, 2, 2))
		}
		a.res.Release()
		r := <-old.done
		if r.err != nil || answerOf(r.res, 2, 1) != nil {
			t.Fatalf("normal request: %v %v", r.err, answerOf(r.res, 2, 1))
		}
		r.res.Release()
	})
}
