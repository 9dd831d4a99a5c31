package session

import (
	"context"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/internal/loop"
)

// watchPeriod is how often a runWatch looks at the runs in flight: the most
// a run goes on after its request is canceled, or after runtime.timeout.
const watchPeriod = 10 * time.Millisecond

// runWatch ends the model runs whose request went away or whose time
// (runtime.timeout) is up, through their run options' Terminate.
//
// It looks every watchPeriod while runs are in flight, rather than a
// context.AfterFunc and a timer per run: those cost each request about 600
// bytes of garbage (the callback, the request context's child map and Done
// channel), more than any other step of a small model's run, for runs that
// mostly end within microseconds. A run is ended at most watchPeriod late.
//
// Its goroutine belongs to the Predictor, which stops it with Stop.
type runWatch struct {
	loop   *loop.Loop
	period time.Duration

	mu       sync.Mutex
	runs     []*runGuard
	watching bool // the goroutine looks every period (runs were in flight)

	wake   chan struct{}
	guards sync.Pool
}

// runGuard is one run in flight.
type runGuard struct {
	ctx      context.Context
	deadline time.Time // zero: no timeout
	ro       *ort.RunOptions
	slot     int // index in runWatch.runs

	// mu orders the watch's Terminate before the run's end: once finished
	// is set the watch leaves ro alone.
	mu                           sync.Mutex
	finished, timedOut, canceled bool
}

func newRunWatch(period time.Duration) *runWatch {
	w := &runWatch{loop: loop.New(), period: period, wake: make(chan struct{}, 1)}
	w.guards.New = func() any { return new(runGuard) }
	w.loop.Spawn(w.watch)
	return w
}

// Stop ends the watch's goroutine and waits for it.
func (w *runWatch) Stop() { w.loop.Stop() }

// begin registers a run of ro for ctx, ended after timeout (0: never).
func (w *runWatch) begin(ctx context.Context, ro *ort.RunOptions, timeout time.Duration) *runGuard {
	g := w.guards.Get().(*runGuard)
	g.ctx, g.ro = ctx, ro
	if timeout > 0 {
		g.deadline = time.Now().Add(timeout)
	}
	w.mu.Lock()
	g.slot = len(w.runs)
	w.runs = append(w.runs, g)
	if !w.watching {
		w.watching = true
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	return g
}

// end unregisters g once its run returned, and reports whether the watch
// terminated it, and why. g goes back to the pool: the caller drops it.
func (w *runWatch) end(g *runGuard) (timedOut, canceled bool) {
	w.mu.Lock()
	last := len(w.runs) - 1
	w.runs[g.slot] = w.runs[last]
	w.runs[g.slot].slot = g.slot
	w.runs[last] = nil
	w.runs = w.runs[:last]
	w.mu.Unlock()

	g.mu.Lock()
	g.finished = true
	timedOut, canceled = g.timedOut, g.canceled
	g.mu.Unlock()

	*g = runGuard{}
	w.guards.Put(g)
	return timedOut, canceled
}

// watch looks at the runs every period while there are any, and sleeps on
// wake while there are none, until stop.
func (w *runWatch) watch(stop <-chan struct{}) {
	t := time.NewTimer(w.period)
	t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-w.wake:
		}
		for busy := true; busy; {
			t.Reset(w.period)
			select {
			case <-stop:
				t.Stop()
				return
			case now := <-t.C:
				busy = w.check(now)
			}
		}
	}
}

// check terminates the runs due at now; false when none is in flight (the
// loop then sleeps until begin wakes it).
func (w *runWatch) check(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.runs) == 0 {
		w.watching = false
		return false
	}
	for _, g := range w.runs {
		switch {
		case !g.deadline.IsZero() && !now.Before(g.deadline):
			g.terminate(&g.timedOut)
		case g.ctx.Err() != nil:
			g.terminate(&g.canceled)
		}
	}
	return true
}

// terminate asks ONNX Runtime to stop g's run, once, unless it has ended.
func (g *runGuard) terminate(why *bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finished || g.timedOut || g.canceled {
		return
	}
	*why = true
	_ = g.ro.Terminate()
}
