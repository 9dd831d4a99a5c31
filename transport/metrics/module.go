package metrics

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/cache"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/transport"
)

// Module makes *Metrics the model's observer (before it starts loading),
// binds its series once the model has loaded, and contributes GET /metrics
// (serving the transport.MetricsJSON a frontend supplies to non-scrapers)
// and the statistics routes.
var Module = fx.Module("metrics",
	fx.Provide(
		newMetricsFx,
		transport.AsRoutes(func(m *Metrics, p routesParams) []transport.Route { return m.Routes(p.JSON) }),
		core.AsPreparer(func(m *Metrics) core.Preparer { return m.Prepare }),
	),
	fx.Invoke(func(model *core.Model, m *Metrics) { model.SetObserver(m) }),
	fx.Invoke(servePeers),
	fx.Invoke(observeSequences),
	fx.Invoke(observeBudget),
	fx.Invoke(observeCache),
	fx.Invoke(observeTexts),
)

type cacheParams struct {
	fx.In
	Metrics *Metrics
	Cache   *cache.Cache `optional:"true"`
}

// observeCache registers the response cache's metrics when the model has
// one (models.NAME.cache).
func observeCache(p cacheParams) error {
	if p.Cache == nil {
		return nil
	}
	return p.Metrics.ObserveCache(p.Cache)
}

type textsParams struct {
	fx.In
	Metrics *Metrics
	Codec   *codec.Codec `optional:"true"`
}

// observeTexts registers the series of the runs of text (core/codec).
func observeTexts(p textsParams) error {
	if p.Codec == nil {
		return nil
	}
	return p.Metrics.ObserveTexts(p.Codec)
}

type budgetParams struct {
	fx.In
	Metrics *Metrics
	Memory  *budget.Memory `optional:"true"`
}

// observeBudget registers the memory budget's metrics (core/budget's
// module).
func observeBudget(p budgetParams) error {
	if p.Memory == nil {
		return nil
	}
	return p.Metrics.ObserveBudget(p.Memory)
}

type sequencesParams struct {
	fx.In
	Metrics *Metrics
	Store   *seq.Store `optional:"true"`
}

// observeSequences registers the sequences' metrics when the application
// keeps sequences (core/seq's module).
func observeSequences(p sequencesParams) error {
	if p.Store == nil {
		return nil
	}
	return p.Metrics.ObserveSequences(p.Store)
}

// Worker is the id of this worker process under --workers; supplied only
// in workers, it labels every series. Workers also supply *Peers, so that
// each serves its metrics to the others on a private socket (from start
// to stop) and answers scrapes and statistics for all of them.
type Worker int

// CPUs are the cores this worker process is pinned to
// (runtime.cpu_affinity), as the statistics show them; supplied only in a
// pinned worker.
type CPUs string

type metricsParams struct {
	fx.In
	Model  *core.Model
	Worker Worker `optional:"true"`
	Peers  *Peers `optional:"true"`
	CPUs   CPUs   `optional:"true"`
}

func newMetricsFx(p metricsParams) (*Metrics, error) {
	return New(Options{Model: p.Model, Worker: int(p.Worker), Peers: p.Peers, CPUs: string(p.CPUs)})
}

// servePeers serves this worker's metrics to the other workers while the
// application runs (only under --workers, when Peers are supplied). A
// socket that cannot be served costs the other workers' answers this
// worker's series (they count it as missing), not the worker: it is logged
// and the worker serves on.
func servePeers(lc fx.Lifecycle, m *Metrics, log *zap.Logger) {
	if m.peers == nil {
		return
	}
	var ps *PeerServer
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			var err error
			if ps, err = m.ServePeers(); err != nil {
				log.Warn("other workers' scrapes will leave this worker out", zap.Error(err))
			}
			return nil
		},
		OnStop: func(ctx context.Context) error {
			if ps == nil {
				return nil
			}
			return ps.Stop(ctx)
		},
	})
}

type routesParams struct {
	fx.In
	JSON transport.MetricsJSON `optional:"true"`
}
