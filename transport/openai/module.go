package openai

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// Module serves the routes on the HTTP port: they join the route group,
// and the handler prepares its view once the model has loaded.
var Module = fx.Module("openai",
	fx.Provide(
		newHandlerFx,
		transport.AsRoutes(func(h *Handler) []transport.Route { return h.Routes() }),
		core.AsPreparer(func(h *Handler) core.Preparer { return h.Prepare }),
	),
)

type handlerParams struct {
	fx.In
	Model   *core.Model
	Limits  config.Limits
	Runtime config.Runtime
	Log     *zap.Logger
	Codec   *codec.Codec   `optional:"true"`
	Memory  *budget.Memory `optional:"true"`
}

func newHandlerFx(p handlerParams) (*Handler, error) {
	return NewHandler(Options{Model: p.Model, Limits: transport.LimitsOf(p.Limits, p.Runtime), Codec: p.Codec, Memory: p.Memory, Logger: p.Log})
}
