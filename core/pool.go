package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
	"go.uber.org/zap"
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
	preds    []*Predictor
	inflight []atomic.Int64
	obs      RunObserver
	// slots holds a token per run under way when bounded (nil: unbounded).
	slots chan struct{}
	// active counts the runs under way (kept only with a wide session).
	active atomic.Int64
	// wide, when set, is a session with every core of the process, for
	// runs that have the machine to themselves when solo finds it faster.
	wide *Predictor
	solo soloChooser
	log  *zap.Logger
}

// NewPool groups predictors of the same model.
func NewPool(preds ...*Predictor) (*Pool, error) {
	if len(preds) == 0 {
		return nil, errors.New("pool: no sessions")
	}
	return &Pool{preds: preds, inflight: make([]atomic.Int64, len(preds)), obs: NopObserver{}}, nil
}

// SetObserver has the pool report each request's wait for a slot to
// obs.Queued (0 when unbounded). Set it only when the pool is the front
// runner; a Batcher in front reports queue times itself.
func (p *Pool) SetObserver(obs RunObserver) {
	if obs == nil {
		obs = NopObserver{}
	}
	p.obs = obs
}

var (
	_ Runner = (*Pool)(nil)
	_ Runner = (*Batcher)(nil)
	_ Runner = (*Predictor)(nil)
)

// Bound lets at most n runs be under way at once (n < 1: no bound). Call it
// before the pool serves.
func (p *Pool) Bound(n int) {
	if n < 1 {
		p.slots = nil
		return
	}
	p.slots = make(chan struct{}, n)
}

// AddWide gives the pool a session of the same model with more intra-op
// threads than its own, for runs that find no other run under way (see
// soloChooser); the pool closes it. log gets a debug line when solo runs
// move from one kind of session to the other. Call it before the pool
// serves.
func (p *Pool) AddWide(wide *Predictor, log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	p.wide, p.log = wide, log
}

// Info describes the model.
func (p *Pool) Info() ModelInfo { return p.preds[0].Info() }

// Specs lists what each input accepts.
func (p *Pool) Specs() []tensor.Spec { return p.preds[0].Specs() }

// Provider is the execution provider the sessions run on.
func (p *Pool) Provider() providers.Provider { return p.preds[0].Provider() }

// Size is the number of sessions.
func (p *Pool) Size() int { return len(p.preds) }

// Predict runs on the least busy session, once a slot is free when the
// pool is bounded.
func (p *Pool) Predict(ctx context.Context, inputs []*tensor.Tensor) (*Result, error) {
	if p.slots != nil {
		select {
		case p.slots <- struct{}{}:
			p.obs.Queued(0)
		default:
			start := time.Now()
			select {
			case p.slots <- struct{}{}:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
			}
			p.obs.Queued(time.Since(start))
		}
		defer func() { <-p.slots }()
	} else {
		p.obs.Queued(0)
	}
	return p.run(ctx, inputs)
}

func (p *Pool) run(ctx context.Context, inputs []*tensor.Tensor) (*Result, error) {
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
	var res *Result
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
func (p *Pool) runNarrow(ctx context.Context, inputs []*tensor.Tensor) (*Result, error) {
	best := 0
	if len(p.preds) > 1 {
		min := p.inflight[0].Load()
		for i := 1; i < len(p.preds); i++ {
			if n := p.inflight[i].Load(); n < min {
				best, min = i, n
			}
		}
	}
	p.inflight[best].Add(1)
	defer p.inflight[best].Add(-1)
	return p.preds[best].Predict(ctx, inputs)
}

// Close closes every session.
func (p *Pool) Close() error {
	var errs []error
	for _, pr := range p.preds {
		errs = append(errs, pr.Close())
	}
	if p.wide != nil {
		errs = append(errs, p.wide.Close())
	}
	return errors.Join(errs...)
}
