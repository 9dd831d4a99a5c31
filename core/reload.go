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
}

// ErrReloadClosed is returned by Reload once the model is closing.
var ErrReloadClosed = errors.New("the server is shutting down")

// reloads runs one reload at a time. A trigger while none runs starts one;
// triggers that come while one runs all wait for one more, started when
// the running one ends (the model file may have changed again since it
// began), and share its result.
type reloads struct {
	mu      sync.Mutex
	running *reloadRun // nil when idle
	next    *reloadRun // the one that starts after running
	closing bool
	idle    chan struct{} // closed when running goes nil while closing
	waiting int

	lastErr           error
	succeeded, failed atomic.Int64
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
	r.mu.Lock()
	defer r.mu.Unlock()
	return ReloadStatus{Loading: r.running != nil, LastError: r.lastErr, Succeeded: r.succeeded.Load(), Failed: r.failed.Load(), Waiting: r.waiting}
}

// Reload loads the model again beside the generation that serves: the
// load, the preparers and the warm-up (whose failure fails the reload
// here), then swaps the new generation in atomically. Requests already
// running finish on the old generation, which closes after the last of
// them. A failure leaves the old generation serving and returns a
// *ReloadError. Reload waits for the load it triggered (or joined) to end,
// or for ctx; the load goes on without the caller when ctx ends.
func (m *Model) Reload(ctx context.Context) (ReloadResult, error) {
	switch s := m.State(); s {
	case StateReady:
	default:
		return ReloadResult{}, &NotReadyError{Model: m.name, State: s}
	}
	r := &m.reload
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return ReloadResult{}, ErrReloadClosed
	}
	var run *reloadRun
	switch {
	case r.running == nil:
		run = &reloadRun{done: make(chan struct{})}
		r.running = run
		go m.reloadLoop(run)
	case r.next == nil:
		r.next = &reloadRun{done: make(chan struct{})}
		run = r.next
	default:
		run = r.next
	}
	r.waiting++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}()
	select {
	case <-run.done:
		return run.res, run.err
	case <-ctx.Done():
		return ReloadResult{}, ctx.Err()
	}
}

// reloadLoop runs run, then the reloads queued behind it.
func (m *Model) reloadLoop(run *reloadRun) {
	r := &m.reload
	for run != nil {
		run.res, run.err = m.reloadOnce()
		r.mu.Lock()
		if run.err != nil {
			r.lastErr = run.err
			r.failed.Add(1)
		} else {
			r.lastErr = nil
			r.succeeded.Add(1)
		}
		hooks := r.onDone
		r.mu.Unlock()
		// The hooks (the log, the metric) see the result before the
		// callers waiting for it do.
		for _, h := range hooks {
			h(run.res, run.err)
		}
		r.mu.Lock()
		close(run.done)
		run, r.next = r.next, nil
		if r.closing && run != nil {
			run.err = ErrReloadClosed
			close(run.done)
			run = nil
		}
		r.running = run
		if run == nil && r.idle != nil {
			close(r.idle)
			r.idle = nil
		}
		r.mu.Unlock()
	}
}

func (m *Model) reloadOnce() (ReloadResult, error) {
	t0 := time.Now()
	fail := func(err error) (ReloadResult, error) { return ReloadResult{}, &ReloadError{Model: m.name, Err: err} }
	var l Loaded
	if err := safely(func() (err error) { l, err = m.loadFn(); return err }); err != nil {
		return fail(err)
	}
	closeNew := func() {
		if l.Close != nil {
			_ = safely(l.Close)
		}
	}
	g, err := m.newGeneration(l, m.prepare)
	if err != nil {
		closeNew()
		return fail(err)
	}
	if m.warmUp != nil {
		// A warm-up failure fails the reload when the serving generation
		// warmed up well; a model whose made-up warm-up inputs never run
		// (an audio model given one sample) would otherwise never reload.
		err := safely(func() error { return m.warmUp(l.Runner) })
		switch old := m.gen.Load(); {
		case err != nil && (old == nil || old.warmed.Load()):
			closeNew()
			return fail(err)
		case err != nil && m.warmFailed != nil:
			m.warmFailed(err)
		}
		g.warmed.Store(err == nil)
	}
	if s := m.State(); s != StateReady {
		closeNew()
		return fail(fmt.Errorf("the model is %s", s))
	}
	m.publish(g)
	return ReloadResult{Seq: g.Seq, Version: g.Version, Took: time.Since(t0)}, nil
}

// stopReloads refuses new reloads and waits for the running one to end.
func (m *Model) stopReloads(ctx context.Context) error {
	r := &m.reload
	r.mu.Lock()
	r.closing = true
	if r.running == nil {
		r.mu.Unlock()
		return nil
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle := r.idle
	r.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("model %q still reloading at shutdown: %w", m.name, ctx.Err())
	}
}
