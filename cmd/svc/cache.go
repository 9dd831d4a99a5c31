package main

import (
	"fmt"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/cache"
	"github.com/svc-dev/svc/core/config"
)

// responseCache puts the model's response cache (models.NAME.cache) in
// front of its scheduler, when svc.yml declares one: each process (each
// worker under --workers) keeps a cache of its own, which every reload
// empties. No cache: no option.
func responseCache(m config.Model) (fx.Option, error) {
	if m.Cache == nil {
		return fx.Options(), nil
	}
	size, ttl, err := m.Cache.Parsed()
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cache.Options{Size: size, TTL: ttl})
	if err != nil {
		return nil, fmt.Errorf("cache.size: %w", err)
	}
	return fx.Options(
		fx.Supply(c),
		fx.Decorate(func(s core.Scheduler) core.Scheduler { return c.Scheduler(s) }),
		fx.Invoke(func(model *core.Model) { model.OnSwap(c.Serve) }),
	), nil
}
