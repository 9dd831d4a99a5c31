package core

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Generation is one loaded copy of the model with everything the frontends
// derived from it (their views: the OpenAPI document and validator, /info,
// the v2 metadata, the codec's settings). It never changes: a reload makes
// a new one and swaps the pointer, so that a request sees one generation
// from start to end. A request holds it with Model.Acquire and lets go
// with Release; a generation replaced by a reload closes its sessions once
// its last request has let go.
type Generation struct {
	Loaded
	// Seq numbers the generations of a Model: 1 is the first load, each
	// reload adds one.
	Seq uint64
	// Version is the model's version (Runner.Info().Version).
	Version string

	views []any
	// warmed is true when the warm-up inference ran well on it.
	warmed atomic.Bool
	// refs counts the requests holding the generation, plus one while it
	// is the current one. At 0 it is closed and can no longer be held.
	refs     atomic.Int64
	closeErr error
	closed   chan struct{}
	once     sync.Once
}

// ViewOf returns the view of type T that a Preparer derived for g (ok is
// false when none did).
func ViewOf[T any](g *Generation) (v T, ok bool) {
	if g == nil {
		return v, false
	}
	for _, x := range g.views {
		if t, ok := x.(T); ok {
			return t, true
		}
	}
	return v, false
}

// Release lets go of a generation held with Model.Acquire. The last
// release of a replaced generation closes its sessions.
func (g *Generation) Release() {
	if g.refs.Add(-1) == 0 {
		g.close()
	}
}

// Closed is closed once the generation's sessions are released.
func (g *Generation) Closed() <-chan struct{} { return g.closed }

// hold takes a reference unless the generation is already closed.
func (g *Generation) hold() bool {
	for {
		n := g.refs.Load()
		if n <= 0 {
			return false
		}
		if g.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// retire drops the reference of being current: the generation closes now
// if no request holds it, or after the last one. It returns the close
// error when it closed at once.
func (g *Generation) retire() error {
	if g.refs.Add(-1) == 0 {
		g.close()
		return g.closeErr
	}
	return nil
}

func (g *Generation) close() {
	g.once.Do(func() {
		if g.Loaded.Close != nil {
			g.closeErr = safely(g.Loaded.Close)
		}
		close(g.closed)
	})
}

// loadGeneration loads the model and runs the preparers over it: a
// generation not yet current. A preparer's failure closes what was
// loaded.
func (m *Model) loadGeneration() (*Generation, error) {
	var l Loaded
	if err := safely(func() (err error) { l, err = m.loadFn(); return err }); err != nil {
		return nil, err
	}
	g := &Generation{Loaded: l, closed: make(chan struct{})}
	if err := m.prepareViews(g); err != nil {
		g.close()
		return nil, err
	}
	g.refs.Store(1)
	return g, nil
}

// prepareViews notes g's version and runs the preparers over it.
func (m *Model) prepareViews(g *Generation) error {
	if g.Runner != nil {
		if err := safely(func() error { g.Version = g.Runner.Info().Version; return nil }); err != nil {
			return err
		}
	}
	for _, p := range m.prepare {
		var v any
		if err := safely(func() (err error) { v, err = p(g.Runner); return err }); err != nil {
			return err
		}
		if v != nil {
			g.views = append(g.views, v)
		}
	}
	return nil
}

// warm runs the warm-up inference on g and notes whether it ran well.
func (m *Model) warm(g *Generation) error {
	err := safely(func() error { return m.warmUp(g.Runner) })
	g.warmed.Store(err == nil)
	return err
}

// publish makes g the generation new requests get and retires the one
// before it; the swap hooks see g first.
func (m *Model) publish(g *Generation) (old *Generation) {
	g.Seq = m.seq.Add(1)
	m.hooksMu.Lock()
	hooks := m.hooks
	m.hooksMu.Unlock()
	for _, h := range hooks {
		h(g)
	}
	old = m.gen.Swap(g)
	if old != nil {
		_ = old.retire()
	}
	return old
}

// OnSwap calls f with each generation as it becomes current (the first
// load included), before requests get it. Frontends that keep state
// outside requests (the metrics' series, later the sequences that must end
// with the generation they began on) follow the model with it.
func (m *Model) OnSwap(f func(*Generation)) {
	m.hooksMu.Lock()
	defer m.hooksMu.Unlock()
	m.hooks = append(m.hooks, f)
}

// ErrClosed is returned by Acquire once the model's sessions are closed.
var ErrClosed = errors.New("model closed")

// Acquire returns the generation a request runs on, held until Release,
// or a *NotReadyError while the model cannot take inferences. A draining
// model still serves.
func (m *Model) Acquire() (*Generation, error) {
	switch s := m.State(); s {
	case StateReady, StateDraining:
	default:
		return nil, &NotReadyError{Model: m.name, State: s}
	}
	for {
		g := m.gen.Load()
		if g == nil {
			return nil, &NotReadyError{Model: m.name, State: StateLoading}
		}
		if g.hold() {
			return g, nil
		}
		if m.gen.Load() == g {
			// Closed at shutdown.
			return nil, &NotReadyError{Model: m.name, State: StateDraining}
		}
	}
}

// Current is the generation new requests get, not held (nil until
// loaded): for what outlives no request, such as a description.
func (m *Model) Current() *Generation { return m.gen.Load() }
