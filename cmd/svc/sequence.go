package main

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/core/workers/seqroute"
)

// sequenceOptions configures the store of sequences from svc.yml: the
// sequence section and what the served model's entry declares. A worker
// started in place of one that died says so to steps of sequences it
// never saw.
func sequenceOptions(src core.Source, cfg config.Config, worker *workers.Worker) seq.Options {
	s := cfg.Sequence
	o := seq.Options{
		MaxIdle:     s.MaxIdle.Std(),
		MaxActive:   s.MaxActive,
		NoBatching:  !s.BatchingOn(),
		MaxBatch:    s.MaxBatchSize,
		MaxIDLength: int(s.MaxIDLength),
	}
	if d := declared(src, cfg).Sequence; d != nil {
		o.States, o.Initial, o.Context = d.States, d.Initial, d.Context
	}
	if worker != nil && worker.Replacement {
		o.Unheard = fmt.Sprintf("or it lived in worker %d, which died and was started again: its state is lost", worker.ID)
	}
	return o
}

// sequenceWorkers, under --workers, runs each sequence's steps in the
// worker that holds it (core/workers/seqroute): for a stateful model, this
// worker answers the others' forwarded steps on its private socket from
// the model's load to the application's stop (a model without state
// opens no socket).
func sequenceWorkers(worker *workers.Worker) fx.Option {
	if worker == nil || worker.Sockets == "" || worker.Count < 2 {
		return fx.Options()
	}
	return fx.Provide(core.AsPreparer(func(lc fx.Lifecycle, store *seq.Store) core.Preparer {
		var (
			mu  sync.Mutex
			srv *seqroute.Server
		)
		lc.Append(fx.StopHook(func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if srv == nil {
				return nil
			}
			return srv.Close(ctx)
		}))
		return func(r core.Runner) (any, error) {
			if store.Describe(r) == nil {
				return nil, nil
			}
			mu.Lock()
			defer mu.Unlock()
			if srv != nil {
				return nil, nil
			}
			var err error
			if srv, err = seqroute.Serve(worker.Sockets, worker.ID, store); err != nil {
				return nil, err
			}
			store.SetRouter(seqroute.New(worker.Sockets, worker.ID, worker.Count))
			return nil, nil
		}
	}))
}
