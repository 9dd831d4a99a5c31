package sched

import (
	"runtime"
	"testing"
)

func TestCPUPlan(t *testing.T) {
	tests := []struct {
		cores, configured, threads int
		slots                      int
	}{
		{2, 0, 1, 2},
		{1, 0, 1, 1},
		{16, 0, 8, 2},
		{2, 2, 2, 1},
		{8, 3, 3, 2},
		{4, 16, 16, 1},
	}
	for _, tt := range tests {
		th, sl := CPUPlan(tt.cores, tt.configured)
		if th != tt.threads || sl != tt.slots {
			t.Errorf("CPUPlan(%d, %d) = %d, %d; want %d, %d", tt.cores, tt.configured, th, sl, tt.threads, tt.slots)
		}
	}
}

func TestGoProcs(t *testing.T) {
	for _, tt := range []struct{ cores, want int }{{1, 1}, {2, 2}, {16, 16}, {0, 1}, {-3, 1}} {
		if got := GoProcs(tt.cores); got != tt.want {
			t.Errorf("GoProcs(%d) = %d, want %d", tt.cores, got, tt.want)
		}
	}
}

// TestCores: Go's own default unless the GOMAXPROCS variable overrides it;
// then every CPU the process may run on.
func TestCores(t *testing.T) {
	if got := Cores(); got != goDefaultProcs || got < 1 {
		t.Fatalf("Cores() = %d without GOMAXPROCS, want Go's default %d", got, goDefaultProcs)
	}
	t.Setenv("GOMAXPROCS", "1")
	if got := Cores(); got != runtime.NumCPU() {
		t.Fatalf("Cores() = %d with GOMAXPROCS set, want the %d CPUs", got, runtime.NumCPU())
	}
}
