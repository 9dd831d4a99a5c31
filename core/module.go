package core

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/providers"
)

// Module provides the served model's lifecycle (*Model) and its *Loader,
// which loads the sessions on the chosen execution provider in the
// background once the servers are up (see Loader.Start), and the Platform
// record. Frontends add Preparers to the "preparers" value group.
var Module = fx.Module("core", fx.Provide(newModelFx, newLoaderFx, newPlatformFx))

// Sessions is the number of in-process sessions of the model (1 unless
// worker processes are unavailable and --workers asks for more).
type Sessions int

// PreparerGroup is the value group of Preparers run before the model is
// ready.
const PreparerGroup = `group:"preparers"`

// AsPreparer annotates a constructor of a Preparer so that its result joins
// the preparers value group.
func AsPreparer(ctor any) any {
	return fx.Annotate(ctor, fx.ResultTags(PreparerGroup))
}

func newModelFx(src Source) *Model { return NewModel(src.Name) }

type loaderParams struct {
	fx.In
	LC        fx.Lifecycle
	Model     *Model
	Source    Source
	Runtime   config.Runtime
	Batching  config.Batching
	Providers config.Providers
	Env       *onnxrt.Env
	Choice    providers.Choice
	Set       providers.Set
	Log       *zap.Logger
	Sessions  Sessions   `optional:"true"`
	Slots     RunSlots   `optional:"true"`
	Procs     TunedProcs `optional:"true"`
	Prepare   []Preparer `group:"preparers"`
}

// Loader starts the model's loading; it is separate from construction so
// that the servers are up first.
type Loader struct {
	p loaderParams
}

func newLoaderFx(p loaderParams) *Loader {
	l := &Loader{p: p}
	p.LC.Append(fx.StopHook(func(ctx context.Context) error { return p.Model.Close(ctx) }))
	r := NewReclaimer(p.Model, p.Runtime.ReleaseMemoryAfter.Std())
	p.LC.Append(fx.StartStopHook(r.Start, r.Stop))
	if p.Procs > 0 && !procsFixed() {
		t := NewProcTuner(p.Model, int(p.Procs), p.Log)
		p.LC.Append(fx.StartStopHook(t.Start, t.Stop))
	}
	return l
}

// Start loads the model in the background: sessions, batcher, the
// preparers, then a warm-up inference when runtime.warmup is on. Watch
// Model.Done for the end.
func (l *Loader) Start() {
	p := l.p
	var warm func(Runner) error
	if p.Runtime.WarmUp {
		warm = WarmUp
	}
	prepare := make([]Preparer, 0, len(p.Prepare))
	for _, f := range p.Prepare {
		if f != nil {
			prepare = append(prepare, f)
		}
	}
	p.Model.Start(l.load, prepare, warm, func(err error) {
		p.Log.Warn("warm-up inference failed; the model serves anyway", zap.Error(err))
	})
}

func (l *Loader) load() (Loaded, error) {
	pool, err := newPool(l.p)
	if err != nil {
		return Loaded{}, err
	}
	loaded := Loaded{Runner: newRunner(pool, l.p), Provider: pool.Provider(), Close: pool.Close}
	if l.p.Runtime.WarmUp {
		t0 := time.Now()
		pl, err := ProbePlacement(l.p.Source.File, l.p.Runtime, pool.Provider(), ProviderOptions(config.Config{Runtime: l.p.Runtime, Providers: l.p.Providers}))
		switch {
		case err != nil:
			l.p.Log.Warn("cannot tell where ONNX Runtime placed the nodes", zap.Error(err))
		case pl == nil:
			l.p.Log.Info("node placement not probed: a second session would compile the model again; svc providers --check MODEL reports it",
				zap.String("provider", pool.Provider().ORTName()))
		default:
			loaded.Placement = pl
			l.p.Log.Info("node placement", zap.String("provider", pool.Provider().ORTName()), zap.String("nodes", pl.String()), zap.Duration("took", time.Since(t0)))
		}
	}
	return loaded, nil
}

func newPool(p loaderParams) (*Pool, error) {
	n := max(int(p.Sessions), 1)
	preds := make([]*Predictor, 0, n)
	for i := 0; i < n; i++ {
		pred, err := newPredictor(p)
		if err != nil {
			for _, q := range preds {
				_ = q.Close()
			}
			return nil, err
		}
		preds = append(preds, pred)
	}
	pool, err := NewPool(preds...)
	if err != nil {
		return nil, err
	}
	if threads := wideThreads(p, pool); threads > 0 {
		wp := p
		wp.Runtime.IntraOpThreads = threads
		wide, err := newPredictor(wp)
		if err != nil {
			_ = pool.Close()
			return nil, fmt.Errorf("session with %d threads for runs alone: %w", threads, err)
		}
		pool.AddWide(wide, p.Log)
		p.Log.Info("a second session with every core runs requests that arrive alone, when measured faster (runtime.adaptive_threads)",
			zap.Int("threads", threads), zap.Int("threads_per_run_under_load", p.Runtime.IntraOpThreads))
	}
	return pool, nil
}

// maxWideModelBytes bounds the model files that get a wide session: it
// holds a second copy of the weights.
const maxWideModelBytes = 512 << 20

// wideThreads is the intra-op threads of the pool's wide session, or 0 for
// none: only with runtime.adaptive_threads, on the CPU provider, with one
// session whose runs get a share of the cores, and a model file of at most
// maxWideModelBytes.
func wideThreads(p loaderParams, pool *Pool) int {
	threads := p.Runtime.IntraOpThreads
	all := threads * int(p.Slots)
	prov := pool.Provider()
	if !p.Runtime.AdaptiveThreads || pool.Size() != 1 || threads < 1 || all <= threads ||
		prov == nil || prov.Name() != providers.FallbackName {
		return 0
	}
	if st, err := os.Stat(p.Source.File); err != nil || st.Size() > maxWideModelBytes {
		return 0
	}
	return all
}

func newPredictor(p loaderParams) (*Predictor, error) {
	meta := map[string]string{}
	for k, v := range p.Source.Metadata {
		meta[k] = v
	}
	if p.Source.Description != "" {
		meta["description"] = p.Source.Description
	}
	return NewPredictor(Options{
		Name:            p.Source.Name,
		File:            p.Source.File,
		Version:         p.Source.Version,
		Metadata:        meta,
		Labels:          p.Source.Labels,
		Runtime:         p.Runtime,
		Provider:        p.Choice.Provider,
		Fallback:        p.Set.Fallback(),
		ProviderOptions: ProviderOptions(config.Config{Runtime: p.Runtime, Providers: p.Providers}),
		Observer:        p.Model.Observer(),
	}, p.Log)
}

// ProviderOptions maps the configuration file's provider settings.
func ProviderOptions(c config.Config) providers.Options {
	return providers.Options{
		DeviceID:    c.Providers.DeviceID,
		MemoryLimit: int64(c.Runtime.MemoryLimit),
		Settings:    c.Providers.Settings,
	}
}

// RunSlots is how many model runs may be under way at once in this process
// when batching (see CPUPlan).
type RunSlots int

// CPUPlan chooses ONNX Runtime's intra-op threads and the number of
// concurrent runs for a process that may use cores CPUs. Unless configured,
// a session gets half the cores (at least one): measured on 2 cores, one
// thread per run beat two by 11–34% in served latency and throughput,
// because the HTTP and JSON work needs the other core (BENCHMARKS.md). Runs
// in flight then fill the cores: cores / threads.
func CPUPlan(cores, configured int) (threads int, slots RunSlots) {
	threads = configured
	if threads <= 0 {
		threads = max(1, cores/2)
	}
	return threads, RunSlots(max(1, cores/threads))
}

// goDefaultProcs is Go's own GOMAXPROCS, read before anything sets it.
var goDefaultProcs = runtime.GOMAXPROCS(0)

// Cores is how many CPUs this process may use: Go's default GOMAXPROCS,
// which counts the CPUs it may run on within a container's CPU limit, or,
// when the GOMAXPROCS variable overrides that default, the CPUs it may run
// on. CPUPlan and GoProcs start from it.
func Cores() int {
	if procsFixed() {
		return runtime.NumCPU()
	}
	return goDefaultProcs
}

// newRunner puts the batcher in front of the pool when batching is on and
// the model allows it. Either way, no more runs are under way at once than
// the slots (the sessions, or the cores' worth of runs: CPUPlan).
func newRunner(pool *Pool, p loaderParams) Runner {
	cfg, log := p.Batching, p.Log
	pool.Bound(max(pool.Size(), int(p.Slots)))
	if !cfg.Enabled {
		pool.SetObserver(p.Model.Observer())
		return pool
	}
	b, err := NewBatcher(pool, BatchOptions{
		MaxBatchSize:  cfg.MaxBatchSize,
		MaxQueueDelay: cfg.MaxQueueDelay.Std(),
		Slots:         max(pool.Size(), int(p.Slots)),
		Observer:      p.Model.Observer(),
		Fixed:         !cfg.Adaptive,
		Log:           log,
	})
	if err != nil {
		log.Info("dynamic batching off for this model", zap.String("reason", err.Error()))
		pool.SetObserver(p.Model.Observer())
		return pool
	}
	log.Debug("dynamic batching on", zap.Int("max_batch_size", cfg.MaxBatchSize), zap.Bool("adaptive", cfg.Adaptive))
	return b
}

func newPlatformFx(env *onnxrt.Env, log *zap.Logger) Platform {
	avail, err := env.AvailableProviders()
	if err != nil {
		log.Warn("cannot list the library's execution providers", zap.Error(err))
	}
	if avail == nil {
		avail = []string{}
	}
	return Platform{Available: avail, Compiled: providers.Compiled()}
}
