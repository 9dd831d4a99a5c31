package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// TestModelPanics: a panic while loading, preparing or warming up fails
// the model (or its warm-up) instead of killing the process.
func TestModelPanics(t *testing.T) {
	ok := func() (core.Loaded, error) { return core.Loaded{}, nil }
	boom := func() { panic("boom") }
	tests := []struct {
		name      string
		load      core.LoadFunc
		prepare   []core.Preparer
		warmUp    func(core.Runner) error
		state     core.State
		warmError bool
	}{
		{"load", func() (core.Loaded, error) { boom(); return core.Loaded{}, nil }, nil, nil, core.StateFailed, false},
		{"prepare", ok, []core.Preparer{func(core.Runner) (any, error) { boom(); return nil, nil }}, nil, core.StateFailed, false},
		{"warm-up", ok, nil, func(core.Runner) error { boom(); return nil }, core.StateReady, true},
		{"no panic", ok, nil, func(core.Runner) error { return nil }, core.StateReady, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := core.NewModel("m")
			var warmErr error
			m.Start(tt.load, tt.prepare, tt.warmUp, func(err error) { warmErr = err })
			<-m.Done()
			if m.State() != tt.state {
				t.Fatalf("state = %v, want %v (err %v)", m.State(), tt.state, m.Err())
			}
			err := m.Err()
			if tt.warmError {
				err = warmErr
			}
			if (tt.state == core.StateFailed || tt.warmError) != (err != nil) {
				t.Fatalf("err = %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), "panic: boom") {
				t.Fatalf("err = %v, want the panic", err)
			}
		})
	}
}

// TestModelLifecycleFailures: a load or preparer error fails the model with
// that error; a drain during loading wins over ready; Close gives up on a
// load still running when its context ends.
func TestModelLifecycleFailures(t *testing.T) {
	fakeLoad := func() (core.Loaded, error) { return core.Loaded{}, nil }
	tests := []struct {
		name    string
		load    core.LoadFunc
		prepare []core.Preparer
		wantErr string
	}{
		{"load fails", func() (core.Loaded, error) { return core.Loaded{}, errors.New("no such file") }, nil, "no such file"},
		{"preparer fails", fakeLoad, []core.Preparer{func(core.Runner) (any, error) { return nil, errors.New("bad document") }}, "bad document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := core.NewModel("m")
			m.Start(tt.load, tt.prepare, nil, nil)
			<-m.Done()
			if err := m.Err(); err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Err() = %v, want %s", err, tt.wantErr)
			}
			if m.State() != core.StateFailed || m.Ready() {
				t.Errorf("state %v", m.State())
			}
			_, err := m.Runner()
			var nr *core.NotReadyError
			if !errors.As(err, &nr) || !errors.Is(err, core.ErrNotReady) || err.Error() != "Model 'm' failed to load" {
				t.Errorf("Runner() error %v", err)
			}
		})
	}

	t.Run("drain while loading", func(t *testing.T) {
		release := make(chan struct{})
		m := core.NewModel("m")
		m.Start(func() (core.Loaded, error) { <-release; return core.Loaded{}, nil }, nil, nil, nil)
		if _, err := m.Runner(); err == nil || err.Error() != "Model 'm' is loading; try again shortly" {
			t.Fatalf("Runner() while loading: %v", err)
		}
		m.Drain()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := m.Close(ctx); err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close during a load: %v", err)
		}
		close(release)
		<-m.Done()
		if m.State() != core.StateDraining || m.Ready() {
			t.Errorf("state after a drain during loading: %v", m.State())
		}
		if err := m.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}
