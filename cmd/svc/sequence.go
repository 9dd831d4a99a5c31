package main

import (
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/seq"
)

// sequenceOptions configures the store of sequences from svc.yml: the
// sequence section and what the served model's entry declares.
func sequenceOptions(src core.Source, cfg config.Config) seq.Options {
	s := cfg.Sequence
	o := seq.Options{
		MaxIdle:    s.MaxIdle.Std(),
		MaxActive:  s.MaxActive,
		NoBatching: !s.BatchingOn(),
		MaxBatch:   s.MaxBatchSize,
	}
	if d := declared(src, cfg).Sequence; d != nil {
		o.States, o.Initial, o.Context = d.States, d.Initial, d.Context
	}
	return o
}
