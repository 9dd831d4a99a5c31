package sched

import (
	"runtime"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
)

// Module provides the core.Scheduler of the served model, from the Config
// the server supplies, and runs the process's memory reclaimer and Go
// processor tuner while the application runs.
var Module = fx.Module("sched",
	fx.Provide(newReclaimerFx, newSchedulerFx),
	fx.Invoke(startProcsFx),
)

func newReclaimerFx(lc fx.Lifecycle, cfg Config, m *core.Model) *Reclaimer {
	r := NewReclaimer(m, cfg.ReleaseMemoryAfter)
	lc.Append(fx.StartStopHook(r.Start, r.Stop))
	return r
}

func newSchedulerFx(cfg Config, m *core.Model, log *zap.Logger, r *Reclaimer) core.Scheduler {
	return New(cfg, m.Observer(), log, r)
}

// startProcsFx sets Go's processors as configured: fixed by the
// GOMAXPROCS variable (left alone), fixed by runtime.go_procs, or tuned
// (when cores are given).
func startProcsFx(lc fx.Lifecycle, cfg Config, m *core.Model, log *zap.Logger) {
	switch {
	case procsFixed():
	case cfg.GoProcs > 0:
		lc.Append(fx.StartHook(func() { runtime.GOMAXPROCS(cfg.GoProcs) }))
	case cfg.Cores > 0:
		t := NewProcTuner(m, cfg.Cores, log)
		lc.Append(fx.StartStopHook(t.Start, t.Stop))
	}
}
