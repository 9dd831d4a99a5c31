package sched

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

func TestProcsFor(t *testing.T) {
	tests := []struct {
		name  string
		cores int
		mean  time.Duration
		cur   int
		want  int
	}{
		{"short runs drop the extra processor", 2, 7 * time.Microsecond, 3, 2},
		{"short runs keep cores", 2, 7 * time.Microsecond, 2, 2},
		{"long runs add one", 2, 2 * time.Millisecond, 2, 3},
		{"long runs keep cores+1", 2, 2 * time.Millisecond, 3, 3},
		{"at the long bound", 4, longRun, 4, 5},
		{"just under the short bound", 4, shortRun - 1, 5, 4},
		{"between the bounds keeps cores", 2, 100 * time.Microsecond, 2, 2},
		{"between the bounds keeps cores+1", 2, 100 * time.Microsecond, 3, 3},
		{"one core, short", 1, time.Microsecond, 2, 1},
		{"one core, long", 1, time.Second, 1, 2},
		{"no cores counted as one", 0, time.Second, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := procsFor(tt.cores, tt.mean, tt.cur); got != tt.want {
				t.Fatalf("procsFor(%d, %v, %d) = %d, want %d", tt.cores, tt.mean, tt.cur, got, tt.want)
			}
		})
	}
}

// fakeProcs stands in for runtime.GOMAXPROCS and records every change.
// fakeRuns counts runs as core.Model does.
type fakeRuns struct{ runs, nanos atomic.Int64 }

func (f *fakeRuns) RunCounts() (int64, int64) { return f.runs.Load(), f.nanos.Load() }

type fakeProcs struct {
	n   int
	set []int
}

func (f *fakeProcs) procs(n int) int {
	old := f.n
	if n > 0 {
		f.n = n
		f.set = append(f.set, n)
	}
	return old
}

// TestProcTunerSteps drives the tuner's steps by hand: each step, the runs
// given end on the model; the tuner must change GOMAXPROCS only after
// procAgree windows in a row called for it, never on an idle or lightly
// loaded window, and go back when the runs change length.
func TestProcTunerSteps(t *testing.T) {
	type window struct {
		runs int64
		each time.Duration
	}
	const win = 100 * time.Millisecond
	short := window{2000, 10 * time.Microsecond}  // 20 ms of runs: busy enough
	long := window{50, 2 * time.Millisecond}      // 100 ms of runs
	light := window{2, 2 * time.Millisecond}      // 4 ms: under a tenth of a core
	middle := window{500, 100 * time.Microsecond} // between the bounds
	idle := window{}
	tests := []struct {
		name    string
		start   int
		windows []window
		want    []int // GOMAXPROCS after each window
	}{
		{"short runs on cores stay", 2, []window{short, short, short, short}, []int{2, 2, 2, 2}},
		{"long runs add a processor after procAgree windows", 2, []window{long, long, long, long}, []int{2, 2, 3, 3}},
		{"short runs take it back", 3, []window{short, short, short}, []int{3, 3, 2}},
		{"an interruption starts the count again", 2, []window{long, long, short, long, long, long}, []int{2, 2, 2, 2, 2, 3}},
		{"idle and light windows do not count", 2, []window{long, idle, long, light, long}, []int{2, 2, 2, 2, 3}},
		{"runs between the bounds keep the setting", 3, []window{middle, middle, middle, middle}, []int{3, 3, 3, 3}},
		{"and back and forth", 2, []window{long, long, long, short, short, short}, []int{2, 2, 3, 3, 3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeRuns{}
			f := &fakeProcs{n: tt.start}
			tu := NewProcTuner(m, 2, zap.NewNop())
			tu.procs, tu.window = f.procs, win
			for i, w := range tt.windows {
				m.runs.Add(w.runs)
				m.nanos.Add(w.runs * int64(w.each))
				tu.step()
				if f.n != tt.want[i] {
					t.Fatalf("after window %d (%d runs of %v): GOMAXPROCS %d, want %d (changes %v)", i+1, w.runs, w.each, f.n, tt.want[i], f.set)
				}
			}
		})
	}
}

// TestProcTunerStartStop: Start sets one processor per core and starts the
// goroutine once, and Stop waits for it; Stop before Start and twice is
// fine, and a tuner stopped before it started sets nothing.
func TestProcTunerStartStop(t *testing.T) {
	m := &fakeRuns{}
	tu := NewProcTuner(m, 2, zap.NewNop())
	f := &fakeProcs{n: 3}
	tu.procs, tu.window = f.procs, time.Millisecond
	tu.Start()
	tu.Start()
	tu.Stop()
	tu.Stop()
	if len(f.set) != 1 || f.set[0] != 2 {
		t.Fatalf("GOMAXPROCS set to %v: want the 2 cores at Start, then no change while the model is idle", f.set)
	}

	never := NewProcTuner(m, 2, zap.NewNop())
	g := &fakeProcs{n: 3}
	never.procs = g.procs
	never.Stop()
	never.Start() // after Stop: starts nothing
	never.Stop()
	if len(g.set) != 0 {
		t.Fatalf("a tuner stopped before it started set GOMAXPROCS: %v", g.set)
	}
}
