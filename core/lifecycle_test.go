package core_test

import (
	"strings"
	"testing"

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
		{"prepare", ok, []core.Preparer{func(core.Runner) error { boom(); return nil }}, nil, core.StateFailed, false},
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
