package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// State is where the served model is in its life.
type State int32

// The states, in the order a model normally goes through them. Failed is
// final: the process stops.
const (
	StateLoading State = iota
	StateWarmingUp
	StateReady
	StateDraining
	StateFailed
)

var stateNames = [...]string{"loading", "warming up", "ready", "draining", "failed"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int32(s))
	}
	return stateNames[s]
}

// NotReadyError is returned by Model.Runner while the model cannot take
// inferences yet (loading, warming up) or any more (failed).
type NotReadyError struct {
	Model string
	State State
}

func (e *NotReadyError) Error() string {
	if e.State == StateFailed {
		return fmt.Sprintf("Model '%s' failed to load", e.Model)
	}
	return fmt.Sprintf("Model '%s' is %s; try again shortly", e.Model, e.State)
}

// ErrNotReady matches every *NotReadyError with errors.Is.
var ErrNotReady = errors.New("model not ready")

// Is makes errors.Is(err, ErrNotReady) true.
func (e *NotReadyError) Is(target error) bool { return target == ErrNotReady }

// Loaded is what loading produced: the runner requests go to and the
// execution provider its sessions run on.
type Loaded struct {
	Runner   Runner
	Provider Provider
	// Placement is where ONNX Runtime put the model's nodes (nil =
	// unknown).
	Placement Placement
	// Close releases the sessions.
	Close func() error
	// Stats reads the scheduler's state (nil: no scheduler).
	Stats func() SchedStats
}

// LoadFunc loads the model: once at start and once per reload, each time
// in a goroutine owned by the Model, one reload at a time; a reload given
// up at its timeout (Model.SetReloadTimeout) may still be loading while
// the next one loads.
type LoadFunc func() (Loaded, error)

// Preparer derives what a frontend needs from a loaded model (an OpenAPI
// document, pre-encoded descriptions) before the model is declared ready.
// What it returns (its view; nil: none) is kept in the Generation and found
// again with ViewOf, by its type: each frontend returns a type of its own.
// An error fails start-up like a load error, and fails a reload (the old
// generation keeps serving).
type Preparer func(Runner) (any, error)

// Model is the served model's lifecycle: it loads in the background after
// the servers are up, runs the preparers and a warm-up inference, and then
// takes requests until it drains. What a load produced, with what the
// preparers derived from it, is a Generation; Reload swaps in a new one
// (reload.go). It has no notion of any protocol; the
// frontends ask it for the runner and report its state their own way.
type Model struct {
	name string

	state atomic.Int32
	// gen is the generation that new requests get (nil until loaded).
	gen atomic.Pointer[Generation]
	// seq numbers the generations.
	seq atomic.Uint64
	// load, prepare and warmUp are Start's, kept for reloads.
	loadFn  LoadFunc
	prepare []Preparer
	warmUp  func(Runner) error
	// warmFailed reports a warm-up error that does not fail the load.
	warmFailed func(error)
	reload     reloads
	hooksMu    sync.Mutex
	hooks      []func(*Generation)

	done    chan struct{} // closed when loading has ended, well or not
	err     error         // why loading failed; set before done closes
	started sync.Once
	since   time.Time
	took    time.Duration

	obs      RunObserver
	runObs   modelObserver
	inFlight atomic.Int64
	// ended counts the requests ended; lastEnd is when the last one ended
	// (Unix nanoseconds). The Reclaimer reads them.
	ended, lastEnd atomic.Int64
	// runs counts the model's runs since it became ready and runNanos
	// the time they took. The ProcTuner reads them.
	runs, runNanos atomic.Int64
}

// NewModel returns the lifecycle of the model called name, in the loading
// state. Nothing is loaded until Start.
func NewModel(name string) *Model {
	m := &Model{name: name, done: make(chan struct{}), obs: NopObserver{}}
	m.runObs.m = m
	return m
}

// Name is the model's name, known before it loads.
func (m *Model) Name() string { return m.name }

// State is the current state.
func (m *Model) State() State { return State(m.state.Load()) }

// Ready reports whether the model takes inferences and should receive
// traffic (false while loading, warming up, draining or failed).
func (m *Model) Ready() bool { return m.State() == StateReady }

// Runner returns the runner for an inference, or a *NotReadyError. A
// draining model still serves, so that requests already on their way are
// not lost; readiness says no new traffic should come.
func (m *Model) Runner() (Runner, error) {
	switch s := m.State(); s {
	case StateReady, StateDraining:
		return m.gen.Load().Runner, nil
	default:
		return nil, &NotReadyError{Model: m.name, State: s}
	}
}

// Provider is the execution provider the sessions run on (nil until
// loaded).
func (m *Model) Provider() Provider {
	if l := m.gen.Load(); l != nil {
		return l.Provider
	}
	return nil
}

// Stats reads the scheduler's state; ok is false until the model has
// loaded (or when it has no scheduler).
func (m *Model) Stats() (s SchedStats, ok bool) {
	if l := m.gen.Load(); l != nil && l.Stats != nil {
		return l.Stats(), true
	}
	return SchedStats{}, false
}

// Placement is where ONNX Runtime put the model's nodes, by provider (nil
// until loaded, or when unknown).
func (m *Model) Placement() Placement {
	if l := m.gen.Load(); l != nil {
		return l.Placement
	}
	return nil
}

// Done is closed when loading has ended: the model is ready, or Err says
// why not.
func (m *Model) Done() <-chan struct{} { return m.done }

// Err is why loading failed (nil while loading and once ready).
func (m *Model) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// LoadTime is how long loading, preparing and warming up took (0 until
// done).
func (m *Model) LoadTime() time.Duration {
	select {
	case <-m.done:
		return m.took
	default:
		return 0
	}
}

// Start loads the model in a goroutine that the Model owns: load, then each
// preparer, then warm-up (when not nil; its error is only logged through
// warmFailed). It returns at once; Done tells when loading ended. Start
// runs once.
func (m *Model) Start(load LoadFunc, prepare []Preparer, warmUp func(Runner) error, warmFailed func(error)) {
	m.started.Do(func() {
		m.since = time.Now()
		m.loadFn, m.prepare, m.warmUp, m.warmFailed = load, prepare, warmUp, warmFailed
		go m.load()
	})
}

func (m *Model) load() {
	defer close(m.done)
	defer func() { m.took = time.Since(m.since) }()
	g, err := m.loadGeneration()
	if err != nil {
		m.fail(err)
		return
	}
	m.publish(g)
	if m.warmUp != nil {
		m.state.CompareAndSwap(int32(StateLoading), int32(StateWarmingUp))
		if err := m.warm(g); err != nil && m.warmFailed != nil {
			m.warmFailed(err)
		}
	}
	// A drain that came while loading wins.
	m.state.CompareAndSwap(int32(StateLoading), int32(StateReady))
	m.state.CompareAndSwap(int32(StateWarmingUp), int32(StateReady))
}

// safely runs f, turning a panic into an error: a bug met while loading
// or warming up fails the model (or its warm-up) instead of killing the
// process from a goroutine no one can recover.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

func (m *Model) fail(err error) {
	m.err = err
	m.state.Store(int32(StateFailed))
}

// Drain marks the model as draining: readiness turns false, inferences
// still run. Servers stop after it.
func (m *Model) Drain() {
	for {
		s := m.state.Load()
		if State(s) == StateFailed || State(s) == StateDraining {
			return
		}
		if m.state.CompareAndSwap(s, int32(StateDraining)) {
			return
		}
	}
}

// Close waits for loading and any reload to end (or ctx), then releases
// the sessions of the generation that serves, and waits for the loads of
// reloads given up at their timeout to end and close what they loaded (or
// ctx); a reload asked for after Close fails.
func (m *Model) Close(ctx context.Context) error {
	if !m.isStarted() {
		return nil
	}
	select {
	case <-m.done:
	default:
		// Loading that has ended wins over a ctx that has too.
		select {
		case <-m.done:
		case <-ctx.Done():
			return fmt.Errorf("model %q still loading at shutdown: %w", m.name, ctx.Err())
		}
	}
	if err := m.stopReloads(ctx); err != nil {
		return err
	}
	var err error
	if g := m.gen.Load(); g != nil {
		err = g.retire()
	}
	return errors.Join(err, m.waitAbandoned(ctx))
}

func (m *Model) isStarted() bool {
	started := true
	m.started.Do(func() { started = false; close(m.done) })
	return started
}
