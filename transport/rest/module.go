package rest

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/transport"
)

// Module serves the v1 API: its routes join the HTTP route group, its error
// form becomes the server's, it supplies the JSON record of GET /metrics
// (transport.MetricsJSON; the route is transport/metrics'), and it prepares
// its bodies once the model has loaded.
var Module = fx.Module("rest",
	fx.Provide(
		newHandlerFx,
		transport.AsRoutes(func(h *Handler) []transport.Route { return h.Routes() }),
		core.AsPreparer(func(h *Handler) core.Preparer { return h.Prepare }),
		func(h *Handler) transport.MetricsJSON { return h.MetricsJSON() },
		func() transport.ErrorWriter { return WriteError },
	),
)

type handlerParams struct {
	fx.In
	Model     *core.Model
	Platform  core.Platform
	Limits    config.Limits
	Runtime   config.Runtime
	Log       *zap.Logger
	Validator BodyValidator `optional:"true"`
	Codec     *codec.Codec  `optional:"true"`
	// Sequences keeps the state of sequences (core/seq's module).
	Sequences *seq.Store `optional:"true"`
	// Memory is the server-wide budget of request memory (core/budget).
	Memory *budget.Memory `optional:"true"`
}

func newHandlerFx(p handlerParams) (*Handler, error) {
	return NewHandler(Options{
		Model:     p.Model,
		Platform:  p.Platform,
		Validator: p.Validator,
		Limits:    transport.LimitsOf(p.Limits, p.Runtime),
		Codec:     p.Codec,
		Sequences: p.Sequences,
		Memory:    p.Memory,
		Logger:    p.Log,
	})
}
