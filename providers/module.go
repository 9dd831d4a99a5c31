package providers

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Requested is the --provider value ("" = automatic).
type Requested string

// Module puts the compiled-in providers into the value group and provides
// the sorted Set and the Choice for this run. It needs a Host, a Requested
// and a *zap.Logger from the application.
func Module() fx.Option {
	return fx.Module("providers", registered(), Selection())
}

// Selection provides the Set, sorted from whatever is in the value group,
// and the Choice. Tests use it with fake providers in the group.
func Selection() fx.Option {
	return fx.Provide(NewSet, NewChoice)
}

// ChoiceParams are what selection needs.
type ChoiceParams struct {
	fx.In
	Set       Set
	Host      Host
	Requested Requested
	Log       *zap.Logger
}

// NewChoice selects the provider and logs what selection passed over: a
// warning when the requested provider cannot run here, debug lines for the
// providers automatic selection skipped.
func NewChoice(p ChoiceParams) (Choice, error) {
	c, err := p.Set.Select(string(p.Requested), p.Host)
	if err != nil {
		return Choice{}, err
	}
	if c.FallbackReason != "" {
		p.Log.Warn("execution provider not usable here; falling back to CPU",
			zap.String("requested", c.Requested), zap.String("fallback", c.Provider.Name()),
			zap.String("reason", c.FallbackReason))
	}
	for _, s := range c.Skipped {
		p.Log.Debug("execution provider not usable here; trying the next",
			zap.String("provider", s.Name), zap.String("reason", s.Reason))
	}
	return c, nil
}
