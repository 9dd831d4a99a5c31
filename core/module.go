package core

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Module provides the served model's lifecycle (*Model) and its *Loader,
// which loads the model in the background once the servers are up (see
// Loader.Start). The Loader needs an Opener (core/session's module) and a
// Scheduler (core/sched's module). Frontends add Preparers to the
// "preparers" value group.
var Module = fx.Module("core", fx.Provide(newModelFx, newLoaderFx))

// PreparerGroup is the value group of Preparers run before the model is
// ready.
const PreparerGroup = `group:"preparers"`

// AsPreparer annotates a constructor of a Preparer so that its result joins
// the preparers value group.
func AsPreparer(ctor any) any {
	return fx.Annotate(ctor, fx.ResultTags(PreparerGroup))
}

// LoadOptions configure loading.
type LoadOptions struct {
	// WarmUp runs one inference on inputs of ones before the model
	// reports ready (runtime.warmup), and finds out where ONNX Runtime
	// placed the nodes.
	WarmUp bool
	// ReloadTimeout bounds each reload (reload.timeout; 0: no bound):
	// see Model.SetReloadTimeout.
	ReloadTimeout time.Duration
}

func newModelFx(src Source) *Model { return NewModel(src.Name) }

type loaderParams struct {
	fx.In
	LC        fx.Lifecycle
	Model     *Model
	Opener    Opener
	Scheduler Scheduler
	Options   LoadOptions
	Log       *zap.Logger
	Prepare   []Preparer `group:"preparers"`
	// Resolve, when supplied, finds the model again before each reload.
	Resolve SourceResolver `optional:"true"`
	// Sample, when supplied, is the warm-up inference in place of inputs
	// of ones.
	Sample WarmUpSample `optional:"true"`
}

// WarmUpSample runs a warm-up inference from a sample the user gave
// (svc.yml's models.NAME.warmup) on a loaded generation's runner.
type WarmUpSample func(Runner) error

// SourceResolver resolves the served model again, for a reload: a model
// pulled from the Hub is served from a new snapshot once a new commit has
// been pulled, and a folder's model file may have changed.
type SourceResolver func() (Source, error)

// Retargeter is an Opener whose sessions can be opened from another
// source: the reloads' resolved one.
type Retargeter interface {
	Retarget(Source)
}

// Loader starts the model's loading; it is separate from construction so
// that the servers are up first.
type Loader struct {
	p     loaderParams
	loads atomic.Int64
}

func newLoaderFx(p loaderParams) *Loader {
	p.LC.Append(fx.StopHook(func(ctx context.Context) error { return p.Model.Close(ctx) }))
	l := &Loader{p: p}
	p.Model.OnReload(l.logReload)
	p.Model.OnAbandonedEnd(l.logAbandoned)
	return l
}

// logReload says how a reload ended.
func (l *Loader) logReload(res ReloadResult, err error) {
	if err != nil {
		l.p.Log.Error("model reload failed; the previous version keeps serving", zap.String("model", l.p.Model.Name()), zap.Error(err))
		return
	}
	l.p.Log.Info("model reloaded", zap.String("model", l.p.Model.Name()), zap.String("version", res.Version),
		zap.Uint64("generation", res.Seq), zap.Duration("took", res.Took))
}

// NewLoader loads m's sessions with open, behind what sched makes of them;
// log gets what loading has to say (nil: nothing).
func NewLoader(m *Model, open Opener, sched Scheduler, o LoadOptions, log *zap.Logger) *Loader {
	if log == nil {
		log = zap.NewNop()
	}
	l := &Loader{p: loaderParams{Model: m, Opener: open, Scheduler: sched, Options: o, Log: log}}
	m.OnReload(l.logReload)
	m.OnAbandonedEnd(l.logAbandoned)
	return l
}

// logAbandoned says how a reload abandoned at reload.timeout ended.
func (l *Loader) logAbandoned(took time.Duration, err error) {
	l.p.Log.Warn("a reload abandoned at reload.timeout has ended; what it loaded is closed",
		zap.String("model", l.p.Model.Name()), zap.Duration("took", took), zap.NamedError("outcome", err))
}

// Start loads the model in the background: sessions and scheduler, the
// preparers, then a warm-up inference when LoadOptions.WarmUp is on. Watch
// Model.Done for the end.
func (l *Loader) Start() {
	p := l.p
	var warm func(Runner) error
	switch {
	case p.Sample != nil && p.Options.WarmUp:
		warm = func(r Runner) error {
			if err := p.Sample(r); err != nil {
				return fmt.Errorf("warm-up sample: %w", err)
			}
			return nil
		}
	case p.Options.WarmUp:
		warm = WarmUp
	}
	prepare := make([]Preparer, 0, len(p.Prepare))
	for _, f := range p.Prepare {
		if f != nil {
			prepare = append(prepare, f)
		}
	}
	p.Model.SetReloadTimeout(p.Options.ReloadTimeout)
	p.Model.Start(l.load, prepare, warm, func(err error) {
		p.Log.Warn("warm-up inference failed; the model serves anyway", zap.Error(err))
	})
}

func (l *Loader) load() (Loaded, error) {
	if l.loads.Add(1) > 1 && l.p.Resolve != nil {
		// A reload: the model may be somewhere else now.
		src, err := l.p.Resolve()
		if err != nil {
			return Loaded{}, err
		}
		if rt, ok := l.p.Opener.(Retargeter); ok {
			rt.Retarget(src)
		}
	}
	s, err := l.p.Scheduler.Schedule(l.p.Opener)
	if err != nil {
		return Loaded{}, err
	}
	loaded := Loaded{Runner: s, Provider: s.Provider(), Close: s.Close, Stats: s.Stats}
	if l.p.Options.WarmUp {
		loaded.Placement = l.placement(s.Provider())
	}
	return loaded, nil
}

// placement finds out where ONNX Runtime placed the nodes, for the log and
// /metrics (nil when unknown).
func (l *Loader) placement(prov Provider) Placement {
	log := l.p.Log
	t0 := time.Now()
	pl, err := l.p.Opener.Placement(prov)
	switch {
	case err != nil:
		log.Warn("cannot tell where ONNX Runtime placed the nodes", zap.Error(err))
	case pl == nil:
		log.Info("node placement not probed: a second session would compile the model again; svc providers --check MODEL reports it",
			zap.String("provider", prov.ORTName()))
	default:
		log.Info("node placement", zap.String("provider", prov.ORTName()), zap.String("nodes", pl.String()), zap.Duration("took", time.Since(t0)))
	}
	return pl
}
