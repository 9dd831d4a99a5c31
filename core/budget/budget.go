// Package budget bounds the memory that requests hold while they are
// served, server-wide: the pictures being decoded, the tensors made from
// pictures and texts, and the outputs of their runs. Each request carries
// a ticket in its context (Memory.Begin, called by the protocol that
// serves it); the codecs and the protocol reserve against it what the
// request will hold, from what the headers and the shapes already say,
// before they allocate; the ticket gives it all back when the request
// ends. A request whose reservation is larger than the whole budget is
// refused at once (*core.LimitError, a 413); one that finds the budget in
// use waits for it, within its deadline and limits.memory_wait, then is
// refused with *core.BusyError (a 503 with Retry-After), so that
// concurrency cannot multiply what one request may hold.
//
// Work that carries no ticket (a warm-up, a test, a merged sequence run)
// reserves nothing.
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/svc-dev/svc/core"
)

// The keys that set the budget, for messages.
const (
	KeySize = "limits.request_memory"
	KeyWait = "limits.memory_wait"
)

// Defaults of New.
const (
	DefaultSize = 256 << 20
	DefaultWait = 5 * time.Second
	// RetryAfter is what a refused request is told to wait.
	RetryAfter = time.Second
)

// Memory is the server-wide budget of request memory. It is safe for
// concurrent use; a nil *Memory bounds nothing.
type Memory struct {
	size int64
	wait time.Duration
	sem  *semaphore.Weighted

	inUse, peak               atomic.Int64
	reserved, waited          atomic.Uint64
	refusedLarge, refusedBusy atomic.Uint64
}

// New returns a budget of size bytes (0: DefaultSize) whose reservations
// wait at most wait (0: DefaultWait) for memory that others hold.
func New(size int64, wait time.Duration) *Memory {
	if size <= 0 {
		size = DefaultSize
	}
	if wait <= 0 {
		wait = DefaultWait
	}
	return &Memory{size: size, wait: wait, sem: semaphore.NewWeighted(size)}
}

// Size is the budget, in bytes.
func (m *Memory) Size() int64 { return m.size }

// Stats are the budget's figures, read when wanted.
type Stats struct {
	// Size is the budget; InUse what requests hold now, Peak the most
	// they held at once.
	Size, InUse, Peak int64
	// Reserved counts the reservations granted, Waited those that had
	// to wait for memory others held.
	Reserved, Waited uint64
	// TooLarge counts the requests refused for needing more than Size,
	// Busy those refused for finding it in use past their wait.
	TooLarge, Busy uint64
}

// Stats returns the budget's figures.
func (m *Memory) Stats() Stats {
	return Stats{Size: m.size, InUse: m.inUse.Load(), Peak: m.peak.Load(),
		Reserved: m.reserved.Load(), Waited: m.waited.Load(),
		TooLarge: m.refusedLarge.Load(), Busy: m.refusedBusy.Load()}
}

type ticketKey struct{}

// ticket is what one request holds of the budget.
type ticket struct {
	m    *Memory
	mu   sync.Mutex
	held int64
	done bool
}

// Begin returns ctx carrying a new ticket for one request, and the
// function that ends it, giving back everything reserved against it; the
// protocol calls it once the request's answer is written. A nil m returns
// ctx itself.
func (m *Memory) Begin(ctx context.Context) (context.Context, func()) {
	if m == nil {
		return ctx, func() {}
	}
	t := &ticket{m: m}
	return context.WithValue(ctx, ticketKey{}, t), t.end
}

func (t *ticket) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	if t.held > 0 {
		t.m.release(t.held)
		t.held = 0
	}
}

func (m *Memory) release(n int64) {
	m.inUse.Add(-n)
	m.sem.Release(n)
}

// Reserve takes n more bytes of the budget for the request ctx belongs
// to, for what (a phrase: "to decode its pictures"), waiting while others
// hold it. It fails with *core.LimitError when the request would hold
// more than the whole budget, and with *core.BusyError when the memory
// is not free within limits.memory_wait or before ctx's deadline; a
// request that ends while it waits gets core.Canceled. A ctx without a
// ticket, or n <= 0, reserves nothing.
func Reserve(ctx context.Context, n int64, what string) error {
	t, _ := ctx.Value(ticketKey{}).(*ticket)
	if t == nil || n <= 0 {
		return nil
	}
	m := t.m
	t.mu.Lock()
	held := t.held
	t.mu.Unlock()
	if held+n > m.size {
		m.refusedLarge.Add(1)
		return &core.LimitError{Key: KeySize, Message: fmt.Sprintf(
			"The request needs %s of memory %s, more than the %s that requests may hold at once (%s)",
			Bytes(held+n), what, Bytes(m.size), KeySize)}
	}
	if err := m.acquire(ctx, n, what); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		// The request ended while it waited: nothing holds the memory.
		m.release(n)
		return core.Canceled(ctx)
	}
	t.held += n
	return nil
}

// acquire takes n bytes of the semaphore, waiting at most m.wait.
func (m *Memory) acquire(ctx context.Context, n int64, what string) error {
	if !m.sem.TryAcquire(n) {
		m.waited.Add(1)
		wctx, cancel := context.WithTimeout(ctx, m.wait)
		err := m.sem.Acquire(wctx, n)
		cancel()
		if err != nil {
			limit := fmt.Sprintf("%s (%s)", m.wait, KeyWait)
			if ctx.Err() != nil {
				cause := context.Cause(ctx)
				if !errors.Is(cause, context.DeadlineExceeded) && !isTimeout(cause) {
					// The client left, or the server stops.
					return core.Canceled(ctx)
				}
				limit = "until its deadline"
			}
			m.refusedBusy.Add(1)
			return &core.BusyError{RetryAfter: RetryAfter, Message: fmt.Sprintf(
				"The server is busy: requests in flight hold the memory this one needs %s (%s of the %s of %s); it waited %s. Retry later",
				what, Bytes(n), Bytes(m.size), KeySize, limit)}
		}
	}
	m.reserved.Add(1)
	for v := m.inUse.Add(n); ; {
		p := m.peak.Load()
		if v <= p || m.peak.CompareAndSwap(p, v) {
			break
		}
	}
	return nil
}

func isTimeout(err error) bool {
	var te *core.TimeoutError
	return errors.As(err, &te)
}

// Bytes writes n bytes for messages, in KiB, MiB or GiB with at most one
// decimal, rounded up: what a request needs is never written as less
// than it is.
func Bytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size {
			tenths := (n*10 + u.size - 1) / u.size
			if tenths%10 == 0 {
				return fmt.Sprintf("%d %s", tenths/10, u.name)
			}
			return fmt.Sprintf("%d.%d %s", tenths/10, tenths%10, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Hold reserves n bytes as Reserve does, for what only part of the
// request holds (one batch of its texts in flight), and returns the
// function that gives them back before the request ends; calling it
// again, or after the request has ended, gives back nothing more.
func Hold(ctx context.Context, n int64, what string) (func(), error) {
	t, _ := ctx.Value(ticketKey{}).(*ticket)
	if t == nil || n <= 0 {
		return func() {}, nil
	}
	if err := Reserve(ctx, n, what); err != nil {
		return func() {}, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.done {
				return
			}
			t.held -= n
			t.m.release(n)
		})
	}, nil
}
