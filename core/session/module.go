package session

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/providers"
)

// Module provides the core.Opener of the served model, on the execution
// provider chosen, and the Platform record (what the ONNX Runtime library
// offers and what this binary has compiled in).
var Module = fx.Module("session", fx.Provide(newOpenerFx, newPlatformFx))

type openerParams struct {
	fx.In
	Source    core.Source
	Runtime   config.Runtime
	Providers config.Providers
	Choice    providers.Choice
	Set       providers.Set
	Model     *core.Model
	Log       *zap.Logger
	// Env is the initialised ONNX Runtime: sessions need it first.
	Env *onnxrt.Env
}

func newOpenerFx(p openerParams) core.Opener {
	return NewOpener(p.Source, p.Runtime, p.Providers, p.Choice, p.Set, p.Model.Observer(), p.Log)
}

func newPlatformFx(env *onnxrt.Env, log *zap.Logger) core.Platform {
	avail, err := env.AvailableProviders()
	if err != nil {
		log.Warn("cannot list the library's execution providers", zap.Error(err))
	}
	if avail == nil {
		avail = []string{}
	}
	return core.Platform{Available: avail, Compiled: providers.Compiled()}
}
