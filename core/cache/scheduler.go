package cache

import (
	"context"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Scheduler puts the cache c in front of what s schedules: each
// generation the model loads runs through c, under an epoch of its own.
func (c *Cache) Scheduler(s core.Scheduler) core.Scheduler {
	return &scheduler{next: s, c: c}
}

type scheduler struct {
	next core.Scheduler
	c    *Cache
}

func (s *scheduler) Schedule(open core.Opener) (core.Schedule, error) {
	inner, err := s.next.Schedule(open)
	if err != nil {
		return nil, err
	}
	return &schedule{Schedule: inner, c: s.c, epoch: s.c.begin()}, nil
}

// schedule is one generation's runner behind the cache.
type schedule struct {
	core.Schedule
	c     *Cache
	epoch uint64
}

// Predict answers from the cache when ctx carries a core.CacheControl
// that does not bypass it; otherwise it runs.
func (s *schedule) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	ctl := core.CacheControlOf(ctx)
	if ctl == nil {
		return s.Schedule.Predict(ctx, inputs)
	}
	if ctl.Bypass {
		ctl.Status = core.CacheBypass
		return s.Schedule.Predict(ctx, inputs)
	}
	key := KeyOf(s.epoch, inputs)
	return s.c.Do(ctx, s.epoch, key, ctl, func() (core.Result, error) { return s.Schedule.Predict(ctx, inputs) })
}

// Serve is the model's swap hook (core.Model.OnSwap): the generation g
// serves from now on, and what the ones before it answered is gone.
func (c *Cache) Serve(g *core.Generation) {
	if s, ok := g.Runner.(*schedule); ok && s.c == c {
		c.serve(s.epoch)
	}
}
