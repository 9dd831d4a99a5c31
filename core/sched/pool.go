package sched

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Pool runs requests on one of several sessions of the same model, picking
// the one with the fewest runs in flight. With one session it adds a single
// atomic counter to each request.
//
// With Bound, at most n runs are under way at once and the others wait
// their turn in arrival order within their priority, the high ones first
// (core.WithPriority); a client that gives up, or whose own timeout passes,
// while waiting never runs. On a CPU, more runs than fill the cores do no more work: they
// take turns on the cores, each holding its memory and caches longer, and
// the HTTP work waits behind them.
type Pool struct {
	sessions []core.Session
	inflight []atomic.Int64
	obs      core.RunObserver
	// front is set when the pool is the front runner (SetObserver): it
	// then reports each request's queue wait to the request's trace too.
	front bool
	// slots holds the run slots when bounded (nil: unbounded).
	slots *slotQueue
}

var (
	_ core.Runner = (*Pool)(nil)
	_ core.Runner = (*Batcher)(nil)
)

// NewPool groups sessions of the same model.
func NewPool(sessions ...core.Session) (*Pool, error) {
	if len(sessions) == 0 {
		return nil, errNoSessions
	}
	return &Pool{sessions: sessions, inflight: make([]atomic.Int64, len(sessions)), obs: core.NopObserver{}}, nil
}

// SetObserver has the pool report each request's wait for a slot to
// obs.Queued (0 when unbounded). Set it only when the pool is the front
// runner; a Batcher in front reports queue times itself.
func (p *Pool) SetObserver(obs core.RunObserver) {
	if obs == nil {
		obs = core.NopObserver{}
	}
	p.obs = obs
	p.front = true
}

// Bound lets at most n runs be under way at once (n < 1: no bound). Call it
// before the pool serves.
func (p *Pool) Bound(n int) {
	if n < 1 {
		p.slots = nil
		return
	}
	p.slots = newSlotQueue(n)
}

// Waiting is the number of requests waiting for a slot now.
func (p *Pool) Waiting() int {
	if p.slots == nil {
		return 0
	}
	return p.slots.waiting()
}

// Slots is the most runs under way at once (0: unbounded).
func (p *Pool) Slots() int {
	if p.slots == nil {
		return 0
	}
	return p.slots.size
}

// Info describes the model.
func (p *Pool) Info() core.ModelInfo { return p.sessions[0].Info() }

// Specs lists what each input accepts.
func (p *Pool) Specs() []tensor.Spec { return p.sessions[0].Specs() }

// Provider is the execution provider the sessions run on.
func (p *Pool) Provider() core.Provider { return p.sessions[0].Provider() }

// Size is the number of sessions.
func (p *Pool) Size() int { return len(p.sessions) }

// Concurrency is how many runs may be under way at once: the run slots
// (the sessions when unbounded).
func (p *Pool) Concurrency() int {
	if n := p.Slots(); n > 0 {
		return n
	}
	return p.Size()
}

// Predict runs on the least busy session, once a slot is free when the
// pool is bounded.
func (p *Pool) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	if p.slots != nil {
		var since time.Time
		var wait time.Duration
		if !p.slots.tryAcquire() {
			since = time.Now()
			if err := p.slots.acquire(ctx, core.PriorityOf(ctx)); err != nil {
				return nil, core.Canceled(ctx)
			}
			wait = time.Since(since)
		}
		defer p.slots.release()
		if ctx.Err() != nil {
			// It ended as the slot came: it never runs.
			return nil, core.Canceled(ctx)
		}
		p.obs.Queued(wait)
		if p.front {
			traceQueue(ctx, since, wait)
		}
	} else {
		p.obs.Queued(0)
		if p.front {
			traceQueue(ctx, time.Time{}, 0)
		}
	}
	return p.runLeastBusy(ctx, inputs)
}

// canceled is the error of a request that ended before it ran: core's
// ErrCanceled wrapping ctx's cause (a core.TimeoutError when the request's
// own timeout passed).

// traceQueue reports a wait for a session that began at since and took
// wait to ctx's trace, if any (a zero since: it ran at once, now).
func traceQueue(ctx context.Context, since time.Time, wait time.Duration) {
	t := core.RequestTraceOf(ctx)
	if t == nil {
		return
	}
	if since.IsZero() {
		since = time.Now()
	}
	t.Step(core.StepQueue, since, since.Add(wait), 0)
}

// runLeastBusy runs on the session with the fewest runs in flight.
func (p *Pool) runLeastBusy(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	best := 0
	if len(p.sessions) > 1 {
		least := p.inflight[0].Load()
		for i := 1; i < len(p.sessions); i++ {
			if n := p.inflight[i].Load(); n < least {
				best, least = i, n
			}
		}
	}
	p.inflight[best].Add(1)
	defer p.inflight[best].Add(-1)
	t := core.RequestTraceOf(ctx)
	if t == nil {
		return p.sessions[best].Predict(ctx, inputs)
	}
	start := time.Now()
	res, err := p.sessions[best].Predict(ctx, inputs)
	if err == nil {
		t.Step(core.StepInfer, start, time.Now(), int(max(batchRows(inputs), 1)))
	}
	return res, err
}

// Close closes every session.
func (p *Pool) Close() error {
	var errs []error
	for _, s := range p.sessions {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
