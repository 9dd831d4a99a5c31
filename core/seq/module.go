package seq

import (
	"context"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
)

// ReasonStopping is what steps that come while the server stops are told.
const ReasonStopping = "the server is stopping"

// Module provides the served model's *Store: it learns the model's state
// pairs as a preparer once the model has loaded, and closes when the
// application stops (steps under way finish first). Options come from the
// application (svc.yml's sequence section and the model's declaration).
var Module = fx.Module("seq",
	fx.Provide(
		newStoreFx,
		core.AsPreparer(func(s *Store) core.Preparer { return s.Prepare }),
	),
)

type storeParams struct {
	fx.In
	LC      fx.Lifecycle
	Model   *core.Model
	Options Options `optional:"true"`
}

func newStoreFx(p storeParams) *Store {
	s := New(p.Options, func() (core.Runner, func(), error) {
		g, err := p.Model.Acquire()
		if err != nil {
			return nil, nil, err
		}
		return g.Runner, g.Release, nil
	})
	// The generation's sequences layout becomes the store's as the
	// generation becomes current; a reload ends the sequences.
	p.Model.OnSwap(func(g *core.Generation) {
		if pr, ok := core.ViewOf[*Prepared](g); ok {
			s.Adopt(pr)
		}
	})
	p.LC.Append(fx.StopHook(func(ctx context.Context) error { return s.Close(ctx, ReasonStopping) }))
	return s
}
