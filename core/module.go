package core

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/providers"
)

// Module provides the Predictor for the resolved Source, on the chosen
// execution provider, and closes it on stop.
var Module = fx.Module("core", fx.Provide(newPoolFx, newRunnerFx, newMetricsFx))

// Sessions is the number of in-process sessions of the model (1 unless
// worker processes are unavailable and --workers asks for more).
type Sessions int

type predictorParams struct {
	fx.In
	LC       fx.Lifecycle
	Source   Source
	Config   config.Config
	Env      *onnxrt.Env
	Choice   providers.Choice
	Set      providers.Set
	Log      *zap.Logger
	Sessions Sessions `optional:"true"`
}

func newPoolFx(p predictorParams) (*Pool, error) {
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
	p.LC.Append(fx.StopHook(func(context.Context) error { return pool.Close() }))
	return pool, nil
}

func newPredictor(p predictorParams) (*Predictor, error) {
	cpu := p.Set.Fallback()
	meta := map[string]string{}
	for k, v := range p.Source.Metadata {
		meta[k] = v
	}
	if p.Source.Description != "" {
		meta["description"] = p.Source.Description
	}
	pred, err := NewPredictor(Options{
		Name:            p.Source.Name,
		File:            p.Source.File,
		Version:         p.Source.Version,
		Metadata:        meta,
		Labels:          p.Source.Labels,
		Runtime:         p.Config.Runtime,
		Provider:        p.Choice.Provider,
		Fallback:        cpu,
		ProviderOptions: ProviderOptions(p.Config),
	}, p.Log)
	if err != nil {
		return nil, err
	}
	return pred, nil
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

type runnerParams struct {
	fx.In
	Pool   *Pool
	Config config.Config
	Log    *zap.Logger
	Slots  RunSlots `optional:"true"`
}

// newRunnerFx puts the batcher in front of the pool when batching is on and
// the model allows it.
func newRunnerFx(p runnerParams) Runner {
	pool, cfg, log := p.Pool, p.Config, p.Log
	if !cfg.Batching.Enabled {
		return pool
	}
	b, err := NewBatcher(pool, BatchOptions{
		MaxBatchSize:  cfg.Batching.MaxBatchSize,
		MaxQueueDelay: cfg.Batching.MaxQueueDelay.Std(),
		Slots:         max(pool.Size(), int(p.Slots)),
	})
	if err != nil {
		log.Info("dynamic batching off for this model", zap.String("reason", err.Error()))
		return pool
	}
	log.Debug("dynamic batching on", zap.Int("max_batch_size", cfg.Batching.MaxBatchSize))
	return b
}

type metricsParams struct {
	fx.In
	Predictor *Pool
	Env       *onnxrt.Env
	Log       *zap.Logger
}

// MetricsFunc returns the current metrics record.
type MetricsFunc func() Metrics

func newMetricsFx(p metricsParams) MetricsFunc {
	avail, err := p.Env.AvailableProviders()
	if err != nil {
		p.Log.Warn("cannot list the library's execution providers", zap.Error(err))
	}
	m := NewMetrics(p.Predictor.Provider(), avail, providers.Compiled())
	return func() Metrics { return m }
}

// NewMetrics builds the metrics record for the provider in use.
func NewMetrics(in providers.Provider, available, compiled []string) Metrics {
	m := Metrics{AvailableProviders: available, CompiledProviders: compiled}
	if m.AvailableProviders == nil {
		m.AvailableProviders = []string{}
	}
	if in != nil {
		m.Provider = ProviderInfo{Name: in.ORTName(), Available: true, Platform: in.Platform(), Description: in.Description()}
	}
	return m
}
