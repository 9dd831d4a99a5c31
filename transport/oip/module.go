package oip

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

// Module serves the Open Inference Protocol v2 on the HTTP port: its routes
// join the HTTP route group and it prepares the model metadata once the
// model has loaded. The svc version comes from a ServerVersion, if one is
// supplied.
var Module = fx.Module("oip",
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
	Version ServerVersion `optional:"true"`
	Codec   *codec.Codec  `optional:"true"`
	// Sequences keeps the state of sequences (core/seq's module).
	Sequences *seq.Store `optional:"true"`
	// Memory is the server-wide budget of request memory (core/budget).
	Memory *budget.Memory `optional:"true"`
}

func newHandlerFx(p handlerParams) (*Handler, error) {
	return NewHandler(Options{
		Model:     p.Model,
		Version:   string(p.Version),
		Limits:    transport.LimitsOf(p.Limits, p.Runtime),
		Codec:     p.Codec,
		Sequences: p.Sequences,
		Memory:    p.Memory,
		Logger:    p.Log,
	})
}
