package sched

import (
	"context"
	"slices"
	"sync"

	"github.com/svc-dev/svc/core"
)

// slotQueue hands out a fixed number of run slots. A request that finds
// none free waits in the queue of its priority: a freed slot goes to the
// first waiter of the highest priority that has one, so interactive
// requests overtake bulk ones while each level keeps its arrival order.
type slotQueue struct {
	size int // the slots, free or not
	mu   sync.Mutex
	free int
	// waiters holds the waiting requests of each priority, oldest first.
	waiters [2][]*slotWaiter
}

// slotWaiter is one waiting request; its channel receives the slot.
type slotWaiter struct{ got chan struct{} }

func newSlotQueue(n int) *slotQueue { return &slotQueue{size: n, free: n} }

// tryAcquire takes a free slot without waiting.
func (q *slotQueue) tryAcquire() bool {
	q.mu.Lock()
	ok := q.free > 0
	if ok {
		q.free--
	}
	q.mu.Unlock()
	return ok
}

// acquire waits for a slot at priority p until ctx ends; it returns ctx's
// error when ctx ends first (and then holds no slot).
func (q *slotQueue) acquire(ctx context.Context, p core.Priority) error {
	q.mu.Lock()
	if q.free > 0 {
		q.free--
		q.mu.Unlock()
		return nil
	}
	w := &slotWaiter{got: make(chan struct{}, 1)}
	q.waiters[p] = append(q.waiters[p], w)
	q.mu.Unlock()
	select {
	case <-w.got:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if q.remove(w, p) {
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	// The slot was handed over as ctx ended: pass it on.
	<-w.got
	q.release()
	return ctx.Err()
}

// remove takes w out of its queue; false when it is no longer there (it
// was given a slot).
func (q *slotQueue) remove(w *slotWaiter, p core.Priority) bool {
	i := slices.Index(q.waiters[p], w)
	if i < 0 {
		return false
	}
	q.waiters[p] = slices.Delete(q.waiters[p], i, i+1)
	return true
}

// release gives a slot back: to the first waiter of the highest priority,
// or to the free ones.
func (q *slotQueue) release() {
	q.mu.Lock()
	for p := len(q.waiters) - 1; p >= 0; p-- {
		if ws := q.waiters[p]; len(ws) > 0 {
			w := ws[0]
			q.waiters[p] = slices.Delete(ws, 0, 1)
			q.mu.Unlock()
			w.got <- struct{}{}
			return
		}
	}
	q.free++
	q.mu.Unlock()
}

// waiting is the number of requests waiting for a slot.
func (q *slotQueue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters[0]) + len(q.waiters[1])
}
