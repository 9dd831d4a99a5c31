package stream

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/transport"
)

// Module serves the WebSocket endpoint of sequences when the application
// keeps them (core/seq's module); its connections close when the
// application stops.
var Module = fx.Module("stream",
	fx.Provide(
		newHandlerFx,
		transport.AsRoutes(func(h *Handler) []transport.Route {
			if h == nil {
				return nil
			}
			return h.Routes()
		}),
	),
)

type handlerParams struct {
	fx.In
	LC        fx.Lifecycle
	Model     *core.Model
	Limits    config.Limits
	Runtime   config.Runtime
	Sequence  config.Sequence
	Access    config.Access
	Log       *zap.Logger
	Sequences *seq.Store `optional:"true"`
	// Memory is the server-wide budget of request memory (core/budget).
	Memory *budget.Memory `optional:"true"`
}

func newHandlerFx(p handlerParams) *Handler {
	if p.Sequences == nil {
		return nil
	}
	h := New(Options{
		Model: p.Model, Sequences: p.Sequences, Logger: p.Log,
		Limits:         transport.LimitsOf(p.Limits, p.Runtime),
		Memory:         p.Memory,
		MaxIdle:        p.Sequence.MaxIdle.Std(),
		ReadTimeout:    p.Limits.ReadTimeout.Std(),
		MaxConnections: p.Sequence.MaxConnections,
		AllowedOrigins: p.Access.CORS.AllowedOrigins,
	})
	// Built before the HTTP server (its routes) and after the store, the
	// handler stops after the server has stopped taking requests and before
	// the store closes: the steps it lets finish still run.
	p.LC.Append(fx.StopHook(h.Stop))
	return h
}
