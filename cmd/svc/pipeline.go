package main

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/pipeline"
	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/transport/metrics"
)

// originPipeline is the origin of a served model that is a pipeline entry
// of svc.yml (models.NAME.pipeline): a model made of the file's models.
const originPipeline = "pipeline"

// resolveServed resolves the model to serve: a pipeline entry of svc.yml
// is served as one model, anything else as registry.Resolve finds it.
func resolveServed(modelName string, cfg config.Config) (core.Source, error) {
	if m, ok := cfg.Models[modelName]; ok && m.Pipeline != nil {
		return core.Source{Name: modelName, Version: m.Version, Description: m.Description,
			Metadata: m.Metadata, Labels: m.Labels, Origin: originPipeline}, nil
	}
	return registry.Resolve(modelName, cfg, registry.Open(registry.DefaultRoot()))
}

type stageParams struct {
	fx.In
	Sched     sched.Config
	Runtime   config.Runtime
	Providers config.Providers
	Choice    providers.Choice
	Set       providers.Set
	Model     *core.Model
	Log       *zap.Logger
	Reclaimer *sched.Reclaimer
	Env       *onnxrt.Env
	Metrics   *metrics.Metrics `optional:"true"`
}

// pipelineOptions serve the pipeline entry src names: each stage's model
// opened as a model served alone would be (core/session) and scheduled
// by the scheduler of single models (core/sched), the page reader over
// them (core/pipeline) in place of the served model's schedule, its
// stages observed by the metrics, and its answers drawn by its Painter.
func pipelineOptions(src core.Source, cfg config.Config) fx.Option {
	lim := image.Limits{MaxPixels: cfg.Limits.ImagePixels(), MaxScanPixels: cfg.Limits.MaxJPEGScanPixels}
	paint := fx.Decorate(func(c *codec.Codec) *codec.Codec { return c.PaintWith(pipeline.Paint) })
	return fx.Options(paint, fx.Decorate(func(_ core.Scheduler, p stageParams) (core.Scheduler, error) {
		var obs pipeline.Observer
		if p.Metrics != nil {
			stages, err := p.Metrics.ObserveStages(src.Name)
			if err != nil {
				return nil, err
			}
			obs = stages
		}
		open := func(model string) (core.Schedule, error) {
			stage, err := registry.Resolve(model, cfg, nil)
			if err != nil {
				return nil, err
			}
			o := session.NewOpener(stage, p.Runtime, p.Providers, p.Choice, p.Set, p.Model.Observer(), p.Log.With(zap.String("stage", model)))
			return sched.New(p.Sched, p.Model.Observer(), p.Log.With(zap.String("stage", model)), p.Reclaimer).Schedule(o)
		}
		return pipeline.Scheduler{Name: src.Name, Config: cfg, Open: open, Limits: lim, MaxRequestPixels: cfg.Limits.MaxRequestPixels, Observe: obs}, nil
	}))
}
