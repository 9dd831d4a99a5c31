package metrics

import (
	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
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
)

// Worker is the id of this worker process under --workers; supplied only
// in workers, it labels every series.
type Worker int

type metricsParams struct {
	fx.In
	Model  *core.Model
	Worker Worker `optional:"true"`
}

func newMetricsFx(p metricsParams) (*Metrics, error) {
	return New(Options{Model: p.Model, Worker: int(p.Worker)})
}

type routesParams struct {
	fx.In
	JSON transport.MetricsJSON `optional:"true"`
}
