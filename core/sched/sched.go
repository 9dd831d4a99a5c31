// Package sched is svc's scheduler: it puts the model's sessions behind
// the one runner that requests go to. A Pool spreads runs over the
// sessions within a bound of runs under way at once; a Batcher in front
// merges requests that wait for a busy session into one run. Its
// self-tuning controllers (the batch size limit, Go's processors) and the
// memory reclaimer live here too, each shown by a gauge and each
// switchable in svc.yml.
//
// It is pure Go over core's Runner and Session: it never touches ONNX
// Runtime (ci/imports enforces that), and its tests run on fakes.
package sched

import (
	"errors"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
)

// Config configures the scheduler; the server fills it in from svc.yml
// and the cores it may use.
type Config struct {
	// Sessions is the number of sessions to open (1 unless --workers asks
	// for several in one process).
	Sessions int
	// Slots is how many runs may be under way at once (CPUPlan); at least
	// one per session.
	Slots int
	// Batching merges requests that wait for a busy session (batching.*).
	Batching Batching
	// ReleaseMemoryAfter gives memory back once no request has run for
	// this long (runtime.release_memory_after; 0: never).
	ReleaseMemoryAfter time.Duration
	// Cores is the number of CPUs whose Go processors the ProcTuner sets
	// (0: no tuner).
	Cores int
	// GoProcs fixes the number of Go processors instead of tuning it
	// (runtime.go_procs; 0: tuned). The GOMAXPROCS variable wins over
	// both.
	GoProcs int
}

// Batching configures dynamic batching.
type Batching struct {
	Enabled       bool
	MaxBatchSize  int
	MaxQueueDelay time.Duration
	// Adaptive learns the batch size limit from the runs; off, merged runs
	// take up to MaxBatchSize rows.
	Adaptive bool
}

// Scheduler opens the model's sessions and puts them behind one runner
// (core.Scheduler).
type Scheduler struct {
	cfg     Config
	obs     core.RunObserver
	log     *zap.Logger
	reclaim *Reclaimer
}

var _ core.Scheduler = (*Scheduler)(nil)

// New returns a scheduler; obs is told about queue waits and runs (nil:
// nobody), log what scheduling decides (nil: nothing), and its schedules'
// Stats say whether reclaim has given memory back (nil: no reclaimer).
func New(cfg Config, obs core.RunObserver, log *zap.Logger, reclaim *Reclaimer) *Scheduler {
	if obs == nil {
		obs = core.NopObserver{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Scheduler{cfg: cfg, obs: obs, log: log, reclaim: reclaim}
}

// Schedule opens the sessions and puts the batcher in front of them when
// batching is on and the model allows it. Either way, no more runs are
// under way at once than the slots.
func (s *Scheduler) Schedule(open core.Opener) (core.Schedule, error) {
	pool, err := s.openPool(open)
	if err != nil {
		return nil, err
	}
	slots := max(pool.Size(), s.cfg.Slots)
	pool.Bound(slots)
	sc := &schedule{Runner: pool, pool: pool, reclaim: s.reclaim}
	if !s.cfg.Batching.Enabled {
		pool.SetObserver(s.obs)
		return sc, nil
	}
	b := s.cfg.Batching
	batcher, err := NewBatcher(pool, BatchOptions{
		MaxBatchSize:  b.MaxBatchSize,
		MaxQueueDelay: b.MaxQueueDelay,
		Slots:         slots,
		Observer:      s.obs,
		Fixed:         !b.Adaptive,
		Log:           s.log,
	})
	if err != nil {
		s.log.Info("dynamic batching off for this model", zap.String("reason", err.Error()))
		pool.SetObserver(s.obs)
		return sc, nil
	}
	s.log.Debug("dynamic batching on", zap.Int("max_batch_size", b.MaxBatchSize), zap.Bool("adaptive", b.Adaptive))
	sc.Runner, sc.batcher = batcher, batcher
	return sc, nil
}

// openPool opens the configured number of sessions.
func (s *Scheduler) openPool(open core.Opener) (*Pool, error) {
	n := max(s.cfg.Sessions, 1)
	sessions := make([]core.Session, 0, n)
	for i := 0; i < n; i++ {
		sess, err := open.Open(0)
		if err != nil {
			for _, o := range sessions {
				_ = o.Close()
			}
			return nil, err
		}
		sessions = append(sessions, sess)
	}
	return NewPool(sessions...)
}

// schedule is the runner in front of the sessions: the pool, or the
// batcher in front of it.
type schedule struct {
	core.Runner
	pool    *Pool
	batcher *Batcher   // nil without batching
	reclaim *Reclaimer // nil: none
}

var _ core.Schedule = (*schedule)(nil)

func (s *schedule) Provider() core.Provider { return s.pool.Provider() }

func (s *schedule) Stats() core.SchedStats {
	st := core.SchedStats{Sessions: s.pool.Concurrency(), GoProcs: runtime.GOMAXPROCS(0)}
	if s.batcher != nil {
		st.Queued, st.BatchLimit = s.batcher.Queued(), s.batcher.Stats().Limit
	}
	st.MemoryReleased = s.reclaim != nil && s.reclaim.Released()
	return st
}

func (s *schedule) Close() error { return s.pool.Close() }

// errNoSessions is what a Pool of no sessions is refused with.
var errNoSessions = errors.New("pool: no sessions")
