package sched

import (
	"math/rand/v2"
	"testing"
	"time"
)

// fakeCPU is a process CPU clock that load advances by what each run
// costs.
type fakeCPU struct{ now time.Duration }

func (c *fakeCPU) read() (time.Duration, bool) { return c.now, true }

// load drives a tuner as a batcher does: each run takes up to the limit
// Next gives out of queued rows (queued(limit) says how many the queue
// holds then), costs the process cost(rows) ns of CPU per element with 1000
// elements per row, and is observed with its tag. It returns the rows of
// every run.
func load(t *sizeTuner, cpu *fakeCPU, runs int, queued func(limit int) int, cost func(rows int) float64) []int {
	rows := make([]int, 0, runs)
	for range runs {
		limit, tag := t.Next()
		r := max(1, min(limit, queued(limit)))
		const perRow = 1000
		cpu.now += time.Duration(cost(r) * float64(r*perRow))
		t.Observe(tag, int64(r*perRow))
		rows = append(rows, r)
	}
	return rows
}

// newTestTuner is a tuner on a fake clock.
func newTestTuner(maxRows int) (*sizeTuner, *fakeCPU) {
	cpu := &fakeCPU{now: time.Second}
	return newSizeTunerClock(maxRows, cpu.read), cpu
}

// saturated is a queue that always holds more rows than any limit.
func saturated(int) int { return 1 << 20 }

// mergedShare is the share of runs that held more than one row.
func mergedShare(rows []int) float64 {
	merged := 0
	for _, r := range rows {
		if r > 1 {
			merged++
		}
	}
	return float64(merged) / float64(len(rows))
}

func TestSizeTunerSettles(t *testing.T) {
	tests := []struct {
		name    string
		maxRows int
		queued  func(int) int
		cost    func(rows int) float64
		want    int
	}{
		// A GPU-like model: every doubling is much cheaper per row.
		{"larger is cheaper", 32, saturated, func(r int) float64 { return 100 / float64(r) }, 32},
		// PaddleOCR det on one core: merging costs more per row.
		{"larger is dearer", 32, saturated, func(r int) float64 { return 100 + 10*float64(r) }, 1},
		// Cheaper up to 8 rows, dearer beyond.
		{"best at 8", 32, saturated, func(r int) float64 {
			if r <= 8 {
				return 100 / float64(r)
			}
			return 20 * float64(r)
		}, 8},
		// Cheaper, but by less than the margin: no reason to merge.
		{"within the margin", 32, saturated, func(r int) float64 { return 100 - float64(r)/2 }, 1},
		{"limit not a power of two", 12, saturated, func(r int) float64 { return 100 / float64(r) }, 12},
		{"batching of one row", 1, saturated, func(r int) float64 { return 100 / float64(r) }, 1},
		// A light load: the queue never holds more than three rows, so
		// limits above 4 cannot be told apart and the tuner stops there.
		{"light load", 32, func(int) int { return 3 }, func(r int) float64 { return 100 / float64(r) }, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu, cpu := newTestTuner(tt.maxRows)
			load(tu, cpu, 4000, tt.queued, tt.cost)
			if got := tu.Limit(); got != tt.want {
				t.Fatalf("limit = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSizeTunerStaysOffDearerSizes: under a load that always fills the
// limit, a model whose merged runs cost more per row runs alone but for
// the probes. (A tuner that compared the runs at the limit with stale ones
// of the size below went back and forth between 4 and 8 rows, with half of
// its runs at the worst size.)
func TestSizeTunerStaysOffDearerSizes(t *testing.T) {
	tu, cpu := newTestTuner(32)
	dearer := func(r int) float64 { return 100 * (1 + 0.1*float64(r-1)) }
	load(tu, cpu, 500, saturated, dearer)
	rows := load(tu, cpu, 10*tunerProbeEvery, saturated, dearer)
	// A probe runs about (tunerMinSamples+1) phases of 2 rows per
	// tunerProbeEvery runs alone: about 3 %.
	if share := mergedShare(rows); share > 0.05 {
		t.Fatalf("%.1f %% of runs merged rows at a dearer size, want under 5 %%", 100*share)
	}
	if tu.Limit() != 1 {
		t.Fatalf("limit = %d, want 1", tu.Limit())
	}
}

// TestSizeTunerNoise: phase costs that vary by ±15 % do not hide a 25 %
// gain per doubling, nor a 20 % loss; with no gain, most runs stay alone
// (the rank test passes noise for a gain in a few per cent of probes, each
// then merging until the next probe).
func TestSizeTunerNoise(t *testing.T) {
	for _, tt := range []struct {
		name string
		gain float64 // cost factor per doubling of rows
		want int     // 0: any limit, but few merged runs
	}{{"cheaper", 0.75, 32}, {"dearer", 1.2, 1}, {"flat", 1, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			tu, cpu := newTestTuner(32)
			cost := func(r int) float64 {
				c := 100.0
				for n := 1; n < r; n *= 2 {
					c *= tt.gain
				}
				return c * (0.85 + 0.3*rng.Float64())
			}
			load(tu, cpu, 3*tunerProbeEvery, saturated, cost)
			if got := tu.Limit(); tt.want > 0 && got != tt.want {
				t.Fatalf("limit = %d, want %d", got, tt.want)
			}
			if tt.want > 1 {
				return
			}
			share := mergedShare(load(tu, cpu, 10*tunerProbeEvery, saturated, cost))
			t.Logf("%.1f %% of runs merged", 100*share)
			if share > 0.2 {
				t.Fatalf("%.1f %% of runs merged, want under 20 %%", 100*share)
			}
		})
	}
}

func TestSizeTunerProbesAgain(t *testing.T) {
	tu, cpu := newTestTuner(32)
	dearer := func(r int) float64 { return 100 * float64(r) }
	load(tu, cpu, 500, saturated, dearer)
	if tu.Limit() != 1 {
		t.Fatalf("limit = %d after dearer merged runs, want 1", tu.Limit())
	}
	// Settled: every run alone until the next probe, tunerProbeEvery
	// queued runs after the last one ended.
	rows := load(tu, cpu, 2*tunerProbeEvery, saturated, dearer)
	first := -1
	for i, r := range rows {
		if r > 1 {
			first = i
			break
		}
	}
	if first < tunerProbeEvery-500 || first > tunerProbeEvery {
		t.Fatalf("first merged run %d runs on, want about %d", first, tunerProbeEvery)
	}
	// The load changed: merged runs are cheaper now, and the limit grows.
	load(tu, cpu, 3*tunerProbeEvery, saturated, func(r int) float64 { return 100 / float64(r) })
	if tu.Limit() != 32 {
		t.Fatalf("limit = %d after cheaper merged runs, want 32", tu.Limit())
	}
}

// TestSizeTunerWallClock: without a CPU clock the phases are timed by the
// wall clock, and the tuner still moves.
// TestSizeTunerWallClock: where the CPU clock cannot be read, the tuner
// times its phases by the wall clock.
func TestSizeTunerWallClock(t *testing.T) {
	tu := newSizeTunerClock(8, func() (time.Duration, bool) { return 0, false })
	var wall time.Duration
	tu.wall = func() time.Duration { return wall }
	for range 4000 {
		limit, tag := tu.Next()
		// Merged runs are much cheaper per row: 20 µs of wall time for a
		// run of any size.
		wall += 20 * time.Microsecond
		tu.Observe(tag, int64(limit)*1000)
		if tu.Limit() == 8 {
			return
		}
	}
	t.Fatalf("limit = %d with merged runs costing the same as single ones, want 8", tu.Limit())
}

func TestSizeTunerIgnores(t *testing.T) {
	tu, _ := newTestTuner(8)
	_, tag := tu.Next()
	for _, r := range []struct {
		tag      int
		elements int64
	}{{tagAlone, 10}, {tag, 0}} {
		if l, moved := tu.Observe(r.tag, r.elements); moved || l != 1 {
			t.Fatalf("Observe(%d, %d) = %d, %v", r.tag, r.elements, l, moved)
		}
	}
	if tu.runs != 0 || tu.phaseRuns != 0 {
		t.Fatalf("ignored runs were counted: runs %d, phase runs %d", tu.runs, tu.phaseRuns)
	}
	// A run formed in an earlier phase counts as a run but not in the
	// present phase.
	tu.mu.Lock()
	tu.startPhaseLocked(tu.phase+1, 0)
	tu.mu.Unlock()
	tu.Observe(tag, 1000)
	if tu.runs != 1 || tu.phaseRuns != 0 {
		t.Fatalf("a stale run was counted in the phase: runs %d, phase runs %d", tu.runs, tu.phaseRuns)
	}
}
