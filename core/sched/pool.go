package sched

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Pool runs requests on one of several sessions of the same model, picking
// the one with the fewest runs in flight. With one session it adds a single
// atomic counter to each request.
//
// With Bound, at most n runs are under way at once and the others wait
// their turn in arrival order (a client that gives up while waiting never
// runs). On a CPU, more runs than fill the cores do no more work: they
// take turns on the cores, each holding its memory and caches longer, and
// the HTTP work waits behind them.
type Pool struct {
	sessions []core.Session
	inflight []atomic.Int64
	obs      core.RunObserver
	// slots holds a token per run under way when bounded (nil: unbounded).
	slots chan struct{}
	// active counts the runs under way (kept only with a wide session).
	active atomic.Int64
	// waiting counts the requests waiting for a slot.
	waiting atomic.Int64
	// wide, when set, is a session with every core of the process, for
	// runs that have the machine to themselves when solo finds it faster.
	wide core.Session
	solo soloChooser
	log  *zap.Logger
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
	return &Pool{sessions: sessions, inflight: make([]atomic.Int64, len(sessions)), obs: core.NopObserver{}, log: zap.NewNop()}, nil
}

// SetObserver has the pool report each request's wait for a slot to
// obs.Queued (0 when unbounded). Set it only when the pool is the front
// runner; a Batcher in front reports queue times itself.
func (p *Pool) SetObserver(obs core.RunObserver) {
	if obs == nil {
		obs = core.NopObserver{}
	}
	p.obs = obs
}

// Bound lets at most n runs be under way at once (n < 1: no bound). Call it
// before the pool serves.
func (p *Pool) Bound(n int) {
	if n < 1 {
		p.slots = nil
		return
	}
	p.slots = make(chan struct{}, n)
}

// Waiting is the number of requests waiting for a slot now.
func (p *Pool) Waiting() int { return int(p.waiting.Load()) }

// Slots is the most runs under way at once (0: unbounded).
func (p *Pool) Slots() int { return cap(p.slots) }

// AddWide gives the pool a session of the same model with more intra-op
// threads than its own, for runs that find no other run under way (see
// soloChooser); the pool closes it. log gets a debug line when solo runs
// move from one kind of session to the other. Call it before the pool
// serves.
func (p *Pool) AddWide(wide core.Session, log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	p.wide, p.log = wide, log
}

// Info describes the model.
func (p *Pool) Info() core.ModelInfo { return p.sessions[0].Info() }

// Specs lists what each input accepts.
func (p *Pool) Specs() []tensor.Spec { return p.sessions[0].Specs() }

// Provider is the execution provider the sessions run on.
func (p *Pool) Provider() core.Provider { return p.sessions[0].Provider() }

// Size is the number of sessions (the wide one aside).
func (p *Pool) Size() int { return len(p.sessions) }

// Concurrency is how many runs the session mode allows at once now: 1
// while runs that find the pool idle go to the wide session, else the run
// slots (the sessions when unbounded).
func (p *Pool) Concurrency() int {
	if p.wide != nil && p.solo.Pick() == wideSession {
		return 1
	}
	if n := p.Slots(); n > 0 {
		return n
	}
	return p.Size()
}

// Predict runs on the least busy session, once a slot is free when the
// pool is bounded.
func (p *Pool) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	if p.slots != nil {
		select {
		case p.slots <- struct{}{}:
			p.obs.Queued(0)
		default:
			start := time.Now()
			p.waiting.Add(1)
			select {
			case p.slots <- struct{}{}:
				p.waiting.Add(-1)
			case <-ctx.Done():
				p.waiting.Add(-1)
				return nil, fmt.Errorf("%w: %w", core.ErrCanceled, context.Cause(ctx))
			}
			p.obs.Queued(time.Since(start))
		}
		defer func() { <-p.slots }()
	} else {
		p.obs.Queued(0)
	}
	return p.run(ctx, inputs)
}

func (p *Pool) run(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	if p.wide == nil {
		return p.runNarrow(ctx, inputs)
	}
	n := p.active.Add(1)
	defer p.active.Add(-1)
	if n != 1 {
		return p.runNarrow(ctx, inputs)
	}
	kind := p.solo.Next()
	start := time.Now()
	var res core.Result
	var err error
	if kind == wideSession {
		res, err = p.wide.Predict(ctx, inputs)
	} else {
		res, err = p.runNarrow(ctx, inputs)
	}
	if err == nil {
		if pick, moved := p.solo.Observe(kind, elementsOf(inputs), time.Since(start)); moved {
			p.log.Debug("runs alone go to another session", zap.Bool("all_cores", pick == wideSession))
		}
	}
	return res, err
}

// runNarrow runs on the least busy of the pool's own sessions.
func (p *Pool) runNarrow(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
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
	return p.sessions[best].Predict(ctx, inputs)
}

// Close closes every session.
func (p *Pool) Close() error {
	var errs []error
	for _, s := range p.sessions {
		errs = append(errs, s.Close())
	}
	if p.wide != nil {
		errs = append(errs, p.wide.Close())
	}
	return errors.Join(errs...)
}
