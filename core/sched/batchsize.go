package sched

import (
	"slices"
	"sync"
	"time"

	"github.com/svc-dev/svc/core/tensor"
)

// sizeTuner learns, from the model's own runs, how many rows a merged run
// should hold. Larger runs are not always cheaper per row: on a GPU they
// usually are, by a lot; on a CPU the answer depends on the model, the
// threads and what else the cores do. PaddleOCR det on one thread runs
// about 7 % fewer rows per second at batch 4 than alone, yet on two cores
// shared with the HTTP work it served 154 requests per second in groups of
// 4 against 127 alone in one pair of runs: the saving is around the runs,
// not in them, so timing the runs alone misleads. The tuner measures what
// a row costs the whole process.
//
// It compares two limits at a time, in alternating phases: while it
// probes, the groups taken from the queue use the settled limit for
// tunerPhaseRuns runs, then a neighbour (half or double it, within 1 and
// MaxBatchSize) for as many, and so on, so both are measured under the same
// load. A phase's cost is the process's CPU time over the phase (the wall
// clock where the CPU clock cannot be read) per input element its runs
// held. Once each side has tunerMinSamples phases (the first of each left
// out: a new size pays for ONNX Runtime's allocations), the side with the
// lower median cost wins, the larger only when it is cheaper by tunerMargin
// and in tunerPairsToWin of the pairs of phases (a one-sided rank test,
// which about 2.5 % of probes between equal costs pass): merging costs
// latency, so it must pay for itself, and noise must not pass for a gain.
// Moving to the neighbour goes on probing the same way; keeping the limit
// ends the probe. tunerProbeEvery queued runs after a probe ends, another
// begins, towards the other side than the last, so a change in load, in
// input shapes or on the machine is noticed. A probe whose phases do not
// complete within tunerProbeRuns queued runs ends where it is.
//
// Runs that did not come from the queue (a request that found a session
// free) are not the limit's doing and are not counted.
//
// A sizeTuner is safe for concurrent use.
type sizeTuner struct {
	mu      sync.Mutex
	maxRows int
	// clock reads the process's CPU time, wall the wall clock it falls
	// back on (tests set their own).
	clock func() (time.Duration, bool)
	wall  func() time.Duration
	// limit is the settled limit; other is the neighbour it is compared
	// with while probing (0: not probing).
	limit, other int
	// up makes the next probe try the larger neighbour first.
	up bool
	// runs counts the queued runs since the probe began or ended.
	runs int
	// phase numbers the phases (even: at limit, odd: at other); the runs
	// of the present one, the input elements they held and when it began
	// (CPU time, or wall time when cpu is false).
	phase         int
	phaseRuns     int
	phaseElements int64
	phaseStart    time.Duration
	cpu           bool
	// sides are the costs of this probe's phases: [0] at limit, [1] at
	// other.
	sides [2]sideCosts
}

// sideCosts holds the cost per input element (ns) of one side's phases in
// a probe.
type sideCosts struct {
	seen  int
	costs [tunerMinSamples]float64
	n     int
}

// add records one phase's cost; the first of a probe is dropped.
func (s *sideCosts) add(cost float64) {
	s.seen++
	if s.seen == 1 || s.n == len(s.costs) {
		return
	}
	s.costs[s.n] = cost
	s.n++
}

func (s *sideCosts) full() bool { return s.n == len(s.costs) }

// median is the middle cost (the mean of the middle two).
func (s *sideCosts) median() float64 {
	c := s.costs
	slices.Sort(c[:])
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// cheaperPairs counts the pairs of a phase of s and a phase of o in which
// s's cost the less (ties count half): the Mann-Whitney U of s against o.
func (s *sideCosts) cheaperPairs(o *sideCosts) float64 {
	var u float64
	for _, x := range s.costs[:s.n] {
		for _, y := range o.costs[:o.n] {
			switch {
			case x < y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	return u
}

// Tags of a run, for Observe: Next hands out the phase number (≥ 0) while
// probing.
const (
	tagAlone   = -1 // not formed from the queue: not counted
	tagSettled = -2 // formed under the settled limit, no probe under way
)

const (
	// tunerPhaseRuns queued runs make a phase.
	tunerPhaseRuns = 8
	// tunerMinSamples phases of each side are compared (an even number).
	tunerMinSamples = 8
	// tunerPairsToWin of the tunerMinSamples² pairs of phases must favour
	// the larger side: the mean under equal costs (32) plus about two
	// standard deviations (9.5).
	tunerPairsToWin = 51
	// tunerMargin is how much cheaper per element the larger side's
	// median must be to win.
	tunerMargin = 0.03
	// tunerProbeEvery queued runs pass between probes.
	tunerProbeEvery = 2048
	// tunerProbeRuns bounds a probe in queued runs: twice what its
	// phases need.
	tunerProbeRuns = 4 * (tunerMinSamples + 1) * tunerPhaseRuns
)

// newSizeTuner starts at one row, probing two at once (when maxRows
// allows), with the process's CPU clock.
func newSizeTuner(maxRows int) *sizeTuner { return newSizeTunerClock(maxRows, processCPU) }

// newSizeTunerClock is newSizeTuner with another clock.
func newSizeTunerClock(maxRows int, clock func() (time.Duration, bool)) *sizeTuner {
	t := &sizeTuner{maxRows: max(maxRows, 1), clock: clock, wall: wallClock, limit: 1, up: true}
	t.probeLocked(false)
	return t
}

// Limit is the settled limit: the most rows a merged run holds outside
// probes.
func (t *sizeTuner) Limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limit
}

// Next is the limit for the next group taken from the queue and the tag
// to hand its run's Observe.
func (t *sizeTuner) Next() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.other == 0:
		return t.limit, tagSettled
	case t.phase%2 == 1:
		return t.other, t.phase
	}
	return t.limit, t.phase
}

// Observe records a run tagged tag (from Next) over elements input
// elements. It returns the settled limit and whether it moved.
func (t *sizeTuner) Observe(tag int, elements int64) (int, bool) {
	if tag == tagAlone || elements < 1 {
		return t.Limit(), false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs++
	if t.other == 0 {
		if t.runs >= tunerProbeEvery {
			t.probeLocked(false)
		}
		return t.limit, false
	}
	if tag != t.phase {
		// Formed in an earlier phase: its cost falls partly in this one,
		// as this phase's last runs' will in the next.
		return t.limit, false
	}
	t.phaseRuns++
	t.phaseElements += elements
	if t.phaseRuns < tunerPhaseRuns {
		return t.limit, false
	}
	now := t.now()
	t.sides[t.phase%2].add(float64(now-t.phaseStart) / float64(t.phaseElements))
	t.startPhaseLocked(t.phase+1, now)
	if !t.sides[0].full() || !t.sides[1].full() {
		if t.runs >= tunerProbeRuns {
			t.settleLocked()
		}
		return t.limit, false
	}
	lo, hi := 0, 1
	if t.other < t.limit {
		lo, hi = hi, lo
	}
	win := lo
	if t.sides[hi].cheaperPairs(&t.sides[lo]) >= tunerPairsToWin &&
		t.sides[hi].median() < t.sides[lo].median()*(1-tunerMargin) {
		win = hi
	}
	if win == 0 {
		t.settleLocked()
		return t.limit, false
	}
	t.up = t.other > t.limit
	t.limit = t.other
	t.probeLocked(true)
	return t.limit, true
}

// now reads the clock of the phases: the process's CPU time, or the wall
// clock when that cannot be read.
func (t *sizeTuner) now() time.Duration {
	if t.cpu {
		if d, ok := t.clock(); ok {
			return d
		}
		t.cpu = false
	}
	return t.wall()
}

// wallClock is the wall clock as a duration since the epoch.
func wallClock() time.Duration { return time.Duration(time.Now().UnixNano()) }

func (t *sizeTuner) startPhaseLocked(phase int, now time.Duration) {
	t.phase, t.phaseRuns, t.phaseElements, t.phaseStart = phase, 0, 0, now
}

// probeLocked starts comparing the limit with a neighbour: the larger
// when up (and there is one), else the smaller. After a move (onward) it
// goes on only the same way; without a neighbour to try, it settles.
func (t *sizeTuner) probeLocked(onward bool) {
	larger, smaller := min(t.limit*2, t.maxRows), t.limit/2
	switch {
	case t.up && larger > t.limit:
		t.other = larger
	case (!t.up || !onward) && smaller >= 1:
		t.other = smaller
	case !onward && larger > t.limit:
		t.other = larger
	default:
		t.settleLocked()
		return
	}
	t.runs = 0
	t.sides = [2]sideCosts{}
	_, t.cpu = t.clock()
	// Phase numbers go on rising, so that runs of an earlier probe are
	// told apart; an even number starts at the limit.
	t.startPhaseLocked(t.phase+2-t.phase%2, t.now())
}

// settleLocked ends a probe; the next one goes the other way.
func (t *sizeTuner) settleLocked() {
	t.other, t.runs = 0, 0
	t.up = !t.up
}

// elementsOf counts the input elements of a run.
func elementsOf(inputs []*tensor.Tensor) int64 {
	var n int64
	for _, t := range inputs {
		if t != nil {
			n += int64(t.Len())
		}
	}
	return n
}
