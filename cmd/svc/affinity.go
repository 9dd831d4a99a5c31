package main

import (
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/workers"
)

// pinWorkers plans the cores of each worker process
// (runtime.cpu_affinity) and logs the sets, or why the workers run
// unpinned; explicit sets that cannot apply stop the start.
func pinWorkers(cfg config.Config, log *zap.Logger) ([][]int, error) {
	a := cfg.Runtime.CPUAffinity
	if !a.On() {
		return nil, nil
	}
	if why := workers.CanPin(); why != "" {
		log.Warn("workers run unpinned", zap.String("key", workers.AffinityKey), zap.String("reason", why))
		return nil, nil
	}
	allowed, err := workers.AllowedCPUs()
	if err != nil {
		log.Warn("workers run unpinned", zap.String("key", workers.AffinityKey), zap.String("reason", err.Error()))
		return nil, nil
	}
	plan, why, err := workers.PlanAffinity(allowed, cfg.Serve.Workers, a.Sets)
	if err != nil {
		return nil, err
	}
	if why != "" {
		log.Warn("workers run unpinned", zap.String("key", workers.AffinityKey), zap.String("reason", why))
		return nil, nil
	}
	sets := make([]string, len(plan))
	for i, p := range plan {
		sets[i] = workers.FormatCPUs(p)
	}
	log.Info("workers pinned to cores", zap.String("key", workers.AffinityKey), zap.Strings("cpus", sets))
	return plan, nil
}
