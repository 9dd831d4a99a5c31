package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
}

// ErrReloadClosed is returned by Reload once the model is closing.
var ErrReloadClosed = errors.New("the server is shutting down")

// reloads is a Model's: the queue that runs them, and how they ended.
type reloads struct {
	queue ReloadQueue

	mu                sync.Mutex
	lastErr           error
	succeeded, failed int64
	onDone            []func(ReloadResult, error)
}

type reloadRun struct {
	done chan struct{}
	res  ReloadResult
	err  error
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

// ReloadStatus reports where reloading stands.
func (m *Model) ReloadStatus() ReloadStatus {
	r := &m.reload
	loading, waiting := r.queue.Busy()
	r.mu.Lock()
	defer r.mu.Unlock()
	return ReloadStatus{Loading: loading, LastError: r.lastErr, Succeeded: r.succeeded, Failed: r.failed, Waiting: waiting}
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
	g, err := m.loadGeneration()
	if err != nil {
		return ReloadResult{}, &ReloadError{Model: m.name, Err: err}
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
	if s := m.State(); err == nil && s != StateReady {
		err = fmt.Errorf("the model is %s", s)
	}
	if err != nil {
		g.close()
		return ReloadResult{}, &ReloadError{Model: m.name, Err: err}
	}
	m.publish(g)
	return ReloadResult{Seq: g.Seq, Version: g.Version, Took: time.Since(t0)}, nil
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
