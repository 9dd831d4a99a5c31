package sched

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// queueRecorder records the waits a pool reports.
type queueRecorder struct {
	core.NopObserver
	mu    sync.Mutex
	waits []time.Duration
}

func (q *queueRecorder) Queued(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waits = append(q.waits, d)
}

func TestPoolBoundQueuesAndCancels(t *testing.T) {
	bubble(t, 5*time.Millisecond, func(t *testing.T) {
		f := newFakeSession(2)
		pool, err := NewPool(f)
		if err != nil {
			t.Fatal(err)
		}
		rec := &queueRecorder{}
		pool.SetObserver(rec)
		pool.Bound(1)
		in := row(2, 1)

		// A free slot: the run goes at once.
		res, err := pool.Predict(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()

		// The only slot is taken: a request whose client gives up while
		// waiting is canceled and never runs.
		if !pool.slots.tryAcquire() {
			t.Fatal("the free slot was not taken")
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := pool.Predict(ctx, in)
			errc <- err
		}()
		cancel()
		if err := <-errc; !errors.Is(err, core.ErrCanceled) {
			t.Fatalf("canceled while waiting: %v, want ErrCanceled", err)
		}

		// A request that waits runs once the slot frees, and reports its wait.
		done := send(context.Background(), pool, in)
		eventually(t, "the request waits for the slot", func() bool { return pool.Waiting() == 1 })
		if len(f.runs()) != 1 {
			t.Fatal("ran while the only slot was taken")
		}
		held := 5 * time.Millisecond // on the bubble's clock, all it moves
		time.Sleep(held)
		pool.slots.release()
		if a := <-done; a.err != nil {
			t.Fatal(a.err)
		}
		if !pool.slots.tryAcquire() {
			t.Fatal("the slot is still held after every run")
		}
		pool.slots.release()
		if got := f.runs(); len(got) != 2 {
			t.Fatalf("%d runs, want 2 (the canceled request never runs)", len(got))
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.Equal(rec.waits, []time.Duration{0, held}) {
			t.Fatalf("waits reported %v, want [0 %v] (the canceled request reports none)", rec.waits, held)
		}
	})
}

// TestPoolPicksTheLeastBusySession: with two sessions, a run goes to the
// one with fewer runs in flight.
func TestPoolPicksTheLeastBusySession(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		a, b := newFakeSession(2), newFakeSession(2)
		a.gate = make(chan struct{}, 1)
		pool, err := NewPool(a, b)
		if err != nil {
			t.Fatal(err)
		}
		busy := send(context.Background(), pool, row(2, 1))
		eventually(t, "the first run", func() bool { return len(a.runs()) == 1 })
		res, err := pool.Predict(context.Background(), row(2, 2))
		if err != nil || answerOf(res, 2, 2) != nil {
			t.Fatalf("%v %v", err, answerOf(res, 2, 2))
		}
		if len(b.runs()) != 1 {
			t.Fatalf("the second run went to the busy session (%v, %v)", a.runs(), b.runs())
		}
		a.gate <- struct{}{}
		if r := <-busy; r.err != nil {
			t.Fatal(r.err)
		}
		if err := pool.Close(); err != nil || !a.closed || !b.closed {
			t.Fatalf("Close: %v; closed %v %v", err, a.closed, b.closed)
		}
		if _, err := NewPool(); err == nil {
			t.Fatal("a pool of no sessions")
		}
	})
}
