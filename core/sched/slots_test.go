package sched

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/svc-dev/svc/core"
)

// TestSlotQueueKeepsEverySlot: requests of both priorities queue for two
// held slots; the slots are freed while a third of the requests give up,
// some of them just as a slot is handed to them (which they pass on).
// Once all are done no slot is lost or doubled: both are free again and
// no one is left waiting.
func TestSlotQueueKeepsEverySlot(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		const size, requests = 2, 300
		q := newSlotQueue(size)
		for range size {
			if !q.tryAcquire() {
				t.Fatal("a free slot")
			}
		}
		var wg sync.WaitGroup
		cancels := make([]context.CancelFunc, requests)
		for i := range requests {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := q.acquire(ctx, core.Priority(i%2)); err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Errorf("acquire: %v, want context.Canceled", err)
					}
					return
				}
				q.release()
			}()
		}
		eventually(t, "every request queues", func() bool { return q.waiting() == requests })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < requests; i += 3 {
				cancels[i]()
			}
		}()
		for range size {
			q.release()
		}
		wg.Wait()
		for _, cancel := range cancels {
			cancel()
		}
		if n := q.waiting(); n != 0 {
			t.Fatalf("%d still waiting", n)
		}
		for i := range size {
			if !q.tryAcquire() {
				t.Fatalf("slot %d of %d lost", i+1, size)
			}
		}
		if q.tryAcquire() {
			t.Fatalf("more than %d slots", size)
		}
	})
}

// TestSlotQueueGivesUpWithCause: a request whose context ends while it
// waits holds no slot and gets the context's error; the slot freed later
// goes to the free ones.
func TestSlotQueueGivesUpWithCause(t *testing.T) {
	q := newSlotQueue(1)
	if !q.tryAcquire() {
		t.Fatal("the first slot")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.acquire(ctx, core.PriorityHigh); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire: %v, want context.Canceled", err)
	}
	if n := q.waiting(); n != 0 {
		t.Fatalf("%d waiting after giving up", n)
	}
	q.release()
	if !q.tryAcquire() {
		t.Fatal("the released slot is not free")
	}
}
