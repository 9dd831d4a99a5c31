package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Hard caps: every run is bounded in time and requests whatever the flags
// say.
const (
	// MaxDuration caps the measured phase of one level.
	MaxDuration = 10 * time.Minute
	// MaxRequests caps the requests of one level's measured phase.
	MaxRequests = 10_000_000
	// MaxWarmup caps the warm-up phase of one level.
	MaxWarmup = time.Minute
	// MaxConcurrency caps the concurrent requests of one level.
	MaxConcurrency = 1024
	// MaxLevels caps the number of concurrency levels.
	MaxLevels = 32
	// MaxTotal caps a whole run (all levels, all modes).
	MaxTotal = time.Hour
	// MaxTimeout caps the per-request timeout.
	MaxTimeout = MaxDuration
)

// Op performs one request on behalf of worker (0 ≤ worker < concurrency);
// seq counts that worker's requests. It returns the HTTP status (0 when
// there is none) and an error.
type Op func(ctx context.Context, worker int, seq int64) (status int, err error)

// Bounds stop the measured phase of a level: at Duration or after
// Requests requests, whichever comes first (0 = not set). The hard caps
// apply in any case.
type Bounds struct {
	Duration time.Duration
	Requests int64
}

// limits returns the effective duration and request count.
func (b Bounds) limits() (time.Duration, int64) {
	d, n := b.Duration, b.Requests
	if d <= 0 || d > MaxDuration {
		d = MaxDuration
	}
	if n <= 0 || n > MaxRequests {
		n = MaxRequests
	}
	return d, n
}

// RunLevel runs op in a closed loop with concurrency workers (each sends a
// request, waits for the answer, sends the next): first for warmup, not
// recorded, then for the measured phase bounded by b. It returns the
// measured level. A level cut short by ctx is marked Interrupted; requests
// that ctx interrupts are not recorded.
func RunLevel(ctx context.Context, concurrency int, warmup time.Duration, b Bounds, op Op) Level {
	if warmup > 0 {
		runPhase(ctx, concurrency, min(warmup, MaxWarmup), MaxRequests, op, nil)
	}
	rec := NewRecorder()
	d, n := b.limits()
	elapsed := runPhase(ctx, concurrency, d, n, op, rec)
	l := rec.Level(concurrency, elapsed)
	l.Interrupted = ctx.Err() != nil
	return l
}

// runPhase runs the workers until d has passed or n requests were issued
// and returns the wall time from the start until the last worker stopped.
// rec may be nil (warm-up).
func runPhase(ctx context.Context, concurrency int, d time.Duration, n int64, op Op, rec *Recorder) time.Duration {
	var issued atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range concurrency {
		wg.Go(func() {
			for seq := int64(0); ; seq++ {
				if ctx.Err() != nil || issued.Add(1) > n {
					return
				}
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				status, err := op(ctx, w, seq)
				lat := time.Since(t0)
				if err != nil && ctx.Err() != nil {
					return // interrupted by the caller, not a failure
				}
				if rec != nil {
					rec.Record(lat, status, err)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
