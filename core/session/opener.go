package session

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
)

// Opener opens sessions of the served model (core.Opener).
type Opener struct {
	// Options are every session's: Runtime.IntraOpThreads is replaced
	// for a session opened with threads > 0.
	Options Options
	Log     *zap.Logger
}

var _ core.Opener = (*Opener)(nil)

// NewOpener opens sessions of src on the chosen provider (falling back to
// set's fallback), configured by runtime and provs; each session reports
// its runs to obs.
func NewOpener(src core.Source, runtime config.Runtime, provs config.Providers, choice providers.Choice, set providers.Set, obs core.RunObserver, log *zap.Logger) *Opener {
	if log == nil {
		log = zap.NewNop()
	}
	meta := map[string]string{}
	for k, v := range src.Metadata {
		meta[k] = v
	}
	if src.Description != "" {
		meta["description"] = src.Description
	}
	return &Opener{Options: Options{
		Name:            src.Name,
		File:            src.File,
		Version:         src.Version,
		Metadata:        meta,
		Labels:          src.Labels,
		Runtime:         runtime,
		Provider:        choice.Provider,
		Fallback:        set.Fallback(),
		ProviderOptions: config.Config{Runtime: runtime, Providers: provs}.ProviderOptions(),
		Observer:        obs,
	}, Log: log}
}

// Open loads one session; threads > 0 gives it that many intra-op threads.
func (o *Opener) Open(threads int) (core.Session, error) {
	opts := o.Options
	if threads > 0 {
		opts.Runtime.IntraOpThreads = threads
	}
	return New(opts, o.Log)
}

// Placement finds out where ONNX Runtime places the model's nodes on p, a
// provider these sessions run on (see ProbePlacement).
func (o *Opener) Placement(p core.Provider) (core.Placement, error) {
	prov, ok := p.(providers.Provider)
	if !ok {
		return nil, fmt.Errorf("placement: %s is not an execution provider of this build", p.Name())
	}
	return ProbePlacement(o.Options.File, o.Options.Runtime, prov, o.Options.ProviderOptions)
}
