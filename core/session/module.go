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
// provider chosen, and the Platform record (the providers usable here,
// those compiled into this binary and those the ONNX Runtime library
// offers).
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

type platformParams struct {
	fx.In
	Env    *onnxrt.Env
	Set    providers.Set
	Host   providers.Host
	Choice providers.Choice
	Log    *zap.Logger
}

// newPlatformFx lists the providers usable here (the compiled-in ones
// whose Usable passes, reusing selection's probes), the compiled-in ones
// and the library's own list.
func newPlatformFx(p platformParams) core.Platform {
	lib, err := p.Env.AvailableProviders()
	if err != nil {
		p.Log.Warn("cannot list the library's execution providers", zap.Error(err))
	}
	if lib == nil {
		lib = []string{}
	}
	return core.Platform{Available: p.Set.Available(p.Host, p.Choice), Compiled: providers.Compiled(), Runtime: lib}
}
