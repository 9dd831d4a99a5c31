package providers

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Requested is the --provider value ("" = automatic).
type Requested string

// Module provides the compiled-in providers, sorted into a Set, and the
// selection for this run.
func Module() fx.Option {
	return fx.Module("providers",
		fx.Options(registered...),
		fx.Provide(NewSet, selectFx),
	)
}

type selectParams struct {
	fx.In
	Set       Set
	Host      Host
	Requested Requested
	Log       *zap.Logger
}

func selectFx(p selectParams) (Choice, error) {
	c, err := p.Set.Select(string(p.Requested), p.Host)
	if err != nil {
		return Choice{}, err
	}
	if c.FallbackReason != "" {
		p.Log.Warn("execution provider not usable here; falling back to CPU",
			zap.String("requested", c.Requested), zap.String("reason", c.FallbackReason))
	}
	return c, nil
}
