package session

import (
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
)

// Opener opens sessions of the served model (core.Opener).
type Opener struct {
	// Options are every session's: Runtime.IntraOpThreads is replaced
	// for a session opened with threads > 0. Retarget changes them.
	Options Options
	Log     *zap.Logger
	mu      sync.Mutex
}

var (
	_ core.Opener     = (*Opener)(nil)
	_ core.Retargeter = (*Opener)(nil)
)

// NewOpener opens sessions of src on the chosen provider (falling back to
// set's fallback), configured by runtime and provs; each session reports
// its runs to obs.
func NewOpener(src core.Source, runtime config.Runtime, provs config.Providers, choice providers.Choice, set providers.Set, obs core.RunObserver, log *zap.Logger) *Opener {
	if log == nil {
		log = zap.NewNop()
	}
	o := &Opener{Options: Options{
		Runtime:         runtime,
		Provider:        choice.Provider,
		Fallback:        set.Fallback(),
		ProviderOptions: config.Config{Runtime: runtime, Providers: provs}.ProviderOptions(),
		Observer:        obs,
	}, Log: log}
	o.Options.setSource(src)
	return o
}

// setSource takes what src says of the model.
func (o *Options) setSource(src core.Source) {
	meta := map[string]string{}
	for k, v := range src.Metadata {
		meta[k] = v
	}
	if src.Description != "" {
		meta["description"] = src.Description
	}
	o.Name, o.File, o.Version, o.Metadata, o.Labels = src.Name, src.File, src.Version, meta, src.Labels
}

// Retarget opens the next sessions from src (a reload's resolved source).
func (o *Opener) Retarget(src core.Source) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Options.setSource(src)
}

func (o *Opener) options() Options {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.Options
}

// Open loads one session; threads > 0 gives it that many intra-op threads.
func (o *Opener) Open(threads int) (core.Session, error) {
	opts := o.options()
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
	opts := o.options()
	return ProbePlacement(opts.File, opts.Runtime, prov, opts.ProviderOptions)
}
