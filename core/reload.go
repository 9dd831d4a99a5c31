package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ReloadResult is what a reload that succeeded made current.
type ReloadResult struct {
	Seq     uint64
	Version string
	Took    time.Duration
}

// ReloadStatus is where reloading stands, for the repository index and the
// metrics.
type ReloadStatus struct {
	// Loading is true while a reload runs.
	Loading bool
	// LastError is why the last reload failed (nil: it succeeded, or
	// none ran); a success clears it.
	LastError error
	// Succeeded and Failed count the reloads since start.
	Succeeded, Failed int64
	// Waiting counts the callers of Reload waiting for a load to end.
	Waiting int
	// Abandoned counts the reloads that failed at reload.timeout and
	// still run; each closes what it loaded when it ends.
	Abandoned int
}

// ErrReloadClosed is returned by Reload once the model is closing.
var ErrReloadClosed = errors.New("the server is shutting down")

// reloads is a Model's: the queue that runs them, and how they ended.
type reloads struct {
	queue ReloadQueue
	// timeout bounds one reload (0: none).
	timeout atomic.Int64

	mu                sync.Mutex
	lastErr           error
	succeeded, failed int64
	onDone            []func(ReloadResult, error)
	// abandoned are the loads given up at the timeout that still run.
	abandoned  map[*loadRun]struct{}
	onAbandons []func(time.Duration, error)
}

// loadRun is the work of one reload (load, preparers, warm-up), run in a
// goroutine of its own so that the reload can give it up at the timeout:
// whichever of finish and abandon comes first decides who has the
// generation, the reload (to publish it) or the run itself (to close it).
type loadRun struct {
	start time.Time
	// done is closed when the run has finished and was not abandoned;
	// ended when its goroutine ends, either way.
	done, ended chan struct{}

	mu                  sync.Mutex
	finished, abandoned bool
	g                   *Generation
	err                 error
}

type reloadRun struct {
	done chan struct{}
	res  ReloadResult
	err  error
}

// ReloadTimeoutError is a reload that did not end within reload.timeout:
// it fails, and what its load yields when it ends is closed.
type ReloadTimeoutError struct {
	Timeout time.Duration
}

func (e *ReloadTimeoutError) Error() string {
	return fmt.Sprintf("the new version did not load within reload.timeout (%s); it is given up, and closed if it ever ends", e.Timeout)
}

// ReloadError is a reload that failed: the old generation keeps serving.
type ReloadError struct {
	Model string
	Err   error
}

func (e *ReloadError) Error() string {
	if e.Model == "" {
		// Reported by another process, which named the model.
		return e.Err.Error()
	}
	return fmt.Sprintf("reload of model '%s' failed; the previous version keeps serving: %v", e.Model, e.Err)
}

func (e *ReloadError) Unwrap() error { return e.Err }

// OnReload calls f after each reload, with its result or error.
func (m *Model) OnReload(f func(ReloadResult, error)) {
	m.reload.mu.Lock()
	defer m.reload.mu.Unlock()
	m.reload.onDone = append(m.reload.onDone, f)
}

// OnAbandonedEnd calls f when the load of a reload that failed at its
// timeout ends, with how long it took and its error (nil: it loaded, and
// what it loaded is closed all the same).
func (m *Model) OnAbandonedEnd(f func(took time.Duration, err error)) {
	m.reload.mu.Lock()
	defer m.reload.mu.Unlock()
	m.reload.onAbandons = append(m.reload.onAbandons, f)
}

// SetReloadTimeout bounds each reload that starts from now on
// (reload.timeout; 0: no bound): a reload whose load, preparers and
// warm-up have not ended within d fails with a *ReloadTimeoutError and
// the old generation serves on. Its load goes on in the background, since
// nothing can stop ONNX Runtime while it creates a session, and what it
// yields is closed when it ends; the reloads after it do not wait for it.
func (m *Model) SetReloadTimeout(d time.Duration) { m.reload.timeout.Store(int64(d)) }

// ReloadStatus reports where reloading stands.
func (m *Model) ReloadStatus() ReloadStatus {
	r := &m.reload
	loading, waiting := r.queue.Busy()
	r.mu.Lock()
	defer r.mu.Unlock()
	return ReloadStatus{Loading: loading, LastError: r.lastErr, Succeeded: r.succeeded, Failed: r.failed, Waiting: waiting,
		Abandoned: len(r.abandoned)}
}

// Reload loads the model again beside the generation that serves: the
// load, the preparers and the warm-up (whose failure fails the reload
// here), then swaps the new generation in atomically. Requests already
// running finish on the old generation, which closes after the last of
// them. A failure leaves the old generation serving and returns a
// *ReloadError. Reload waits for the load it triggered (or joined) to end,
// or for ctx; the load goes on without the caller when ctx ends.
func (m *Model) Reload(ctx context.Context) (ReloadResult, error) {
	if s := m.State(); s != StateReady {
		return ReloadResult{}, &NotReadyError{Model: m.name, State: s}
	}
	return m.reload.queue.Do(ctx, m.reloadCounted)
}

// reloadCounted runs one reload and counts it; the hooks (the log, the
// metric) see its result before the callers waiting for it do.
func (m *Model) reloadCounted() (ReloadResult, error) {
	res, err := m.reloadOnce()
	r := &m.reload
	r.mu.Lock()
	r.lastErr = err
	if err != nil {
		r.failed++
	} else {
		r.succeeded++
	}
	hooks := r.onDone
	r.mu.Unlock()
	for _, h := range hooks {
		h(res, err)
	}
	return res, err
}

func (m *Model) reloadOnce() (ReloadResult, error) {
	t0 := time.Now()
	g, err := m.loadBounded()
	if err != nil {
		return ReloadResult{}, &ReloadError{Model: m.name, Err: err}
	}
	if s := m.State(); s != StateReady {
		g.close()
		return ReloadResult{}, &ReloadError{Model: m.name, Err: fmt.Errorf("the model is %s", s)}
	}
	m.publish(g)
	return ReloadResult{Seq: g.Seq, Version: g.Version, Took: time.Since(t0)}, nil
}

// loadBounded runs a reload's work (loadWarm) in a goroutine of its own
// and waits for it up to the reload timeout; past it, the run is
// abandoned: it closes what it loads when it ends.
func (m *Model) loadBounded() (*Generation, error) {
	run := &loadRun{start: time.Now(), done: make(chan struct{}), ended: make(chan struct{})}
	go m.runLoad(run)
	var timeout <-chan time.Time
	if d := time.Duration(m.reload.timeout.Load()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-run.done:
	case <-timeout:
		run.mu.Lock()
		if !run.finished {
			// Noted as abandoned before runLoad can see it is.
			run.abandoned = true
			m.reload.mu.Lock()
			if m.reload.abandoned == nil {
				m.reload.abandoned = map[*loadRun]struct{}{}
			}
			m.reload.abandoned[run] = struct{}{}
			m.reload.mu.Unlock()
			run.mu.Unlock()
			return nil, &ReloadTimeoutError{Timeout: time.Duration(m.reload.timeout.Load())}
		}
		run.mu.Unlock()
	}
	return run.g, run.err
}

// runLoad does run's work and hands its result to the reload, or, when
// the reload has given it up, closes what it loaded.
func (m *Model) runLoad(run *loadRun) {
	defer close(run.ended)
	g, err := m.loadWarm()
	run.mu.Lock()
	if !run.abandoned {
		run.g, run.err, run.finished = g, err, true
		run.mu.Unlock()
		close(run.done)
		return
	}
	run.mu.Unlock()
	if g != nil {
		g.close()
	}
	r := &m.reload
	r.mu.Lock()
	delete(r.abandoned, run)
	hooks := r.onAbandons
	r.mu.Unlock()
	for _, h := range hooks {
		h(time.Since(run.start), err)
	}
}

// loadWarm loads a generation, runs the preparers over it and warms it
// up: a generation ready to publish, or nothing and why.
func (m *Model) loadWarm() (*Generation, error) {
	g, err := m.loadGeneration()
	if err != nil {
		return nil, err
	}
	if m.warmUp != nil {
		// A warm-up failure fails the reload when the serving generation
		// warmed up well; a model whose made-up warm-up inputs never run
		// (an audio model given one sample) would otherwise never reload.
		werr := m.warm(g)
		switch old := m.gen.Load(); {
		case werr != nil && (old == nil || old.warmed.Load()):
			err = werr
		case werr != nil && m.warmFailed != nil:
			m.warmFailed(werr)
		}
	}
	if err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// waitAbandoned waits for the loads abandoned at the timeout to end (or
// for ctx): at shutdown, after the reloads have stopped.
func (m *Model) waitAbandoned(ctx context.Context) error {
	for {
		r := &m.reload
		r.mu.Lock()
		var run *loadRun
		for x := range r.abandoned {
			run = x
			break
		}
		r.mu.Unlock()
		if run == nil {
			return nil
		}
		select {
		case <-run.ended:
		case <-ctx.Done():
			return fmt.Errorf("model %q: a reload given up at reload.timeout still loads at shutdown: %w", m.name, ctx.Err())
		}
	}
}

// stopReloads refuses new reloads and waits for the running one to end.
func (m *Model) stopReloads(ctx context.Context) error {
	if err := m.reload.queue.Close(ctx); err != nil {
		return fmt.Errorf("model %q still reloading at shutdown: %w", m.name, err)
	}
	return nil
}

// ReloadQueue runs reloads one at a time. A call while none runs starts
// one; calls that come while one runs all wait for one more, started when
// the running one ends (the model may have changed again since it began),
// and share its result. The zero value is ready to use.
type ReloadQueue struct {
	mu      sync.Mutex
	running *reloadRun // nil when idle
	next    *reloadRun // the one that starts after running
	closing bool
	idle    chan struct{} // closed when running goes nil while closing
	waiting int
}

// Do runs reload, or joins the run queued behind the one under way, and
// waits for its result or for ctx; the run goes on without the caller when
// ctx ends. Once Close has begun it returns ErrReloadClosed.
func (q *ReloadQueue) Do(ctx context.Context, reload func() (ReloadResult, error)) (ReloadResult, error) {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return ReloadResult{}, ErrReloadClosed
	}
	var run *reloadRun
	switch {
	case q.running == nil:
		run = &reloadRun{done: make(chan struct{})}
		q.running = run
		go q.loop(run, reload)
	case q.next == nil:
		q.next = &reloadRun{done: make(chan struct{})}
		run = q.next
	default:
		run = q.next
	}
	q.waiting++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.waiting--
		q.mu.Unlock()
	}()
	select {
	case <-run.done:
		return run.res, run.err
	case <-ctx.Done():
		return ReloadResult{}, ctx.Err()
	}
}

// loop runs run, then the runs queued behind it.
func (q *ReloadQueue) loop(run *reloadRun, reload func() (ReloadResult, error)) {
	for run != nil {
		run.res, run.err = reload()
		q.mu.Lock()
		close(run.done)
		run, q.next = q.next, nil
		if q.closing && run != nil {
			run.err = ErrReloadClosed
			close(run.done)
			run = nil
		}
		q.running = run
		if run == nil && q.idle != nil {
			close(q.idle)
			q.idle = nil
		}
		q.mu.Unlock()
	}
}

// Busy reports whether a run is under way, and how many callers of Do
// wait for one.
func (q *ReloadQueue) Busy() (running bool, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running != nil, q.waiting
}

// Close refuses new runs and the one queued, and waits for the one under
// way to end (or for ctx).
func (q *ReloadQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	q.closing = true
	if q.running == nil {
		q.mu.Unlock()
		return nil
	}
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
