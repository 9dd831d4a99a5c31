package sched

import (
	"os"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/internal/loop"
)

// Go's processors (GOMAXPROCS) and the length of the model's runs.
//
// A model run holds the Go processor of its goroutine for as long as ONNX
// Runtime works (a cgo call). With a run on every processor, the HTTP, JSON
// and batching work of the requests behind them waits until Go's system
// monitor takes a processor back from a run, which it checks for every 20 µs
// to 10 ms, and the runs then wait for one to return to. For models whose
// runs take that long, one processor more than the cores keeps that work
// going while the runs hold theirs. For models whose runs end within a few
// microseconds nothing ever waits for a run's processor, and the extra one
// only puts one more thread on the cores than there are cores: the
// operating system then takes a core from a thread that holds a processor,
// and the requests queued on it wait a whole time slice (milliseconds).
//
// Measured on 2 cores with wrk on the same cores (one server per setting,
// alternating, three rounds):
//   - a tiny model (runs of about 7 µs): 2 processors served 17–22 % more
//     requests/s than 3 at concurrency 16 and 12 % more at concurrency 4;
//     on a core of its own (taskset, wrk on the other), 1 processor against
//     2 cut p99 from 6.9–7.4 ms to 0.56–0.57 ms at a p50 of about 125 µs
//     and served 8–10 % more;
//   - PaddleOCR cls (runs of about 2 ms): 3 processors served 0–8 % more
//     than 2 at concurrency 16, Silero VAD (about 0.3 ms) 0–16 % more.
//
// So a process starts with as many processors as cores (GoProcs), and a
// ProcTuner adds the extra one once the runs are measured long, and takes
// it away again when they are short. runtime.go_procs fixes the number
// instead, and so does the GOMAXPROCS variable (which wins).

const (
	// shortRun and longRun bound the mean run time: under shortRun the
	// runs are short, from longRun on long, in between the setting stays.
	shortRun = 50 * time.Microsecond
	longRun  = 200 * time.Microsecond
	// procWindow is how often the tuner looks; procAgree is how many
	// windows in a row must call for a change before it is made.
	procWindow = 200 * time.Millisecond
	procAgree  = 3
	// procBusy is the least share of one core the runs of a window must
	// have taken for the window to count: an idle server keeps its
	// setting.
	procBusy = 0.1
)

// procsFixed reports whether the GOMAXPROCS variable fixes the number of
// Go processors (svc then leaves it alone).
func procsFixed() bool {
	_, set := os.LookupEnv("GOMAXPROCS")
	return set
}

// GoProcs is the number of Go processors a process that may use cores CPUs
// starts with: one per core.
func GoProcs(cores int) int { return max(1, cores) }

// procsFor is the number of processors that runs of mean length mean call
// for on cores CPUs; cur is the present setting, kept when mean is between
// shortRun and longRun.
func procsFor(cores int, mean time.Duration, cur int) int {
	switch {
	case mean >= longRun:
		return max(1, cores) + 1
	case mean < shortRun:
		return max(1, cores)
	}
	return cur
}

// RunCounter counts the model's runs: core.Model.
type RunCounter interface {
	// RunCounts is the number of runs so far and the time they took
	// (nanoseconds).
	RunCounts() (runs, nanos int64)
}

// ProcTuner sets GOMAXPROCS from the model's runs while it serves: cores,
// or cores + 1 once the runs are long (see above). Each window it reads the
// runs that ended (the model's run counters); a window whose runs took
// less than a tenth of a core leaves the setting as it is.
type ProcTuner struct {
	loop  *loop.Loop
	runs  RunCounter
	cores int
	log   *zap.Logger
	// procs reads (n < 1) or sets GOMAXPROCS, returning the previous value;
	// tests replace it.
	procs  func(n int) int
	window time.Duration
	// The loop goroutine's own: the run counters at the last step, and
	// the change the last steps called for (want, agree steps in a row).
	seen, busy  int64
	want, agree int
}

// NewProcTuner tunes GOMAXPROCS for the runs counted by runs on cores
// CPUs.
func NewProcTuner(runs RunCounter, cores int, log *zap.Logger) *ProcTuner {
	if log == nil {
		log = zap.NewNop()
	}
	return &ProcTuner{loop: loop.New(), runs: runs, cores: max(1, cores), log: log, procs: runtime.GOMAXPROCS, window: procWindow}
}

// Start sets GOMAXPROCS to GoProcs(cores) and runs the tuner every window
// in a goroutine it owns until Stop (once; later calls do nothing).
func (t *ProcTuner) Start() {
	t.loop.Start(t.window, func() {
		t.procs(GoProcs(t.cores))
		t.seen, t.busy = t.runs.RunCounts()
	}, t.step)
}

// Stop ends the tuner and waits for its goroutine; GOMAXPROCS stays as it
// is. It may be called more than once, and before Start.
func (t *ProcTuner) Stop() { t.loop.Stop() }

// step looks at the runs since the last step and changes GOMAXPROCS when
// procAgree steps in a row called for the same change.
func (t *ProcTuner) step() {
	r, b := t.runs.RunCounts()
	n, d := r-t.seen, time.Duration(b-t.busy)
	t.seen, t.busy = r, b
	if n == 0 || float64(d) < procBusy*float64(t.window) {
		return
	}
	mean := d / time.Duration(n)
	cur := t.procs(0)
	next := procsFor(t.cores, mean, cur)
	if next == cur {
		t.want, t.agree = 0, 0
		return
	}
	if next != t.want {
		t.want, t.agree = next, 0
	}
	if t.agree++; t.agree < procAgree {
		return
	}
	t.procs(next)
	t.want, t.agree = 0, 0
	t.log.Info("Go processors set for the length of the model's runs",
		zap.Int("gomaxprocs", next), zap.Int("was", cur), zap.Duration("mean_run", mean))
}
