package core

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
)

// Pool runs requests on one of several sessions of the same model, picking
// the one with the fewest runs in flight. With one session it adds a single
// atomic counter to each request.
type Pool struct {
	preds    []*Predictor
	inflight []atomic.Int64
	obs      RunObserver
}

// NewPool groups predictors of the same model.
func NewPool(preds ...*Predictor) (*Pool, error) {
	if len(preds) == 0 {
		return nil, errors.New("pool: no sessions")
	}
	return &Pool{preds: preds, inflight: make([]atomic.Int64, len(preds)), obs: NopObserver{}}, nil
}

// SetObserver has the pool report each request to obs.Queued, with 0: a
// pool never makes a request wait. Set it only when the pool is the front
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

// Info describes the model.
func (p *Pool) Info() ModelInfo { return p.preds[0].Info() }

// Specs lists what each input accepts.
func (p *Pool) Specs() []tensor.Spec { return p.preds[0].Specs() }

// Provider is the execution provider the sessions run on.
func (p *Pool) Provider() providers.Provider { return p.preds[0].Provider() }

// Size is the number of sessions.
func (p *Pool) Size() int { return len(p.preds) }

// Predict runs on the least busy session.
func (p *Pool) Predict(ctx context.Context, inputs []*tensor.Tensor) (*Result, error) {
	best := 0
	if len(p.preds) > 1 {
		min := p.inflight[0].Load()
		for i := 1; i < len(p.preds); i++ {
			if n := p.inflight[i].Load(); n < min {
				best, min = i, n
			}
		}
	}
	p.obs.Queued(0)
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
	return errors.Join(errs...)
}
