package core

import (
	"math/bits"
	"sync"
	"time"

	"github.com/svc-dev/svc/core/tensor"
)

// sizeTuner learns, from the model's own runs, how many rows a merged run
// should hold. Larger runs are not always cheaper per row: on a GPU they
// usually are, by a lot, but on a CPU session with one intra-op thread many
// models gain a few per cent at most, and some lose (PaddleOCR det at
// 224×256 on one thread gains nothing at batch 2 and runs 30 % slower per
// row at batch 8 than alone). So the batcher does not assume: it measures.
//
// Runs fall into size classes by their rows: 1, 2–3, 4–7, 8–15, and so on.
// For each class the tuner keeps a moving average of the time per input
// element (so that requests of different shapes compare). The limit on the
// rows of a merged run moves one class at a time, and only once both the
// class at the limit and the one below it have enough recent runs: down
// when the limit's class costs more per element than the one below, up
// (to the next power of two, at most MaxBatchSize) when it costs less.
// With the limit at one row, it tries two rows again every probeEvery runs,
// so a change in load, in input shapes or on the machine is noticed.
//
// A sizeTuner is safe for concurrent use.
type sizeTuner struct {
	mu      sync.Mutex
	maxRows int
	limit   int
	// sinceChange counts the runs since the limit last moved.
	sinceChange int
	classes     []sizeClass
}

// sizeClass is what the tuner knows of the runs of one size class.
type sizeClass struct {
	// perElement is the moving average of run time per input element, in
	// nanoseconds.
	perElement float64
	// samples counts the runs averaged in since the class was last reset.
	samples int
}

const (
	// tunerMinSamples runs of a class are needed before it is compared.
	tunerMinSamples = 8
	// tunerAlpha is the weight of a new run in a class's average.
	tunerAlpha = 0.2
	// tunerMargin is how much cheaper per element a larger class must be to
	// raise the limit (a smaller margin to lower it would let noise push
	// the limit back and forth).
	tunerMargin = 0.03
	// tunerProbeEvery is how many runs at a limit of one row pass before
	// two rows are tried again.
	tunerProbeEvery = 512
)

// newSizeTuner starts with a limit of two rows (or one when maxRows is 1):
// the first merged runs are compared with single ones straight away.
func newSizeTuner(maxRows int) *sizeTuner {
	maxRows = max(maxRows, 1)
	return &sizeTuner{
		maxRows: maxRows,
		limit:   min(2, maxRows),
		classes: make([]sizeClass, sizeClassOf(int64(maxRows))+1),
	}
}

// sizeClassOf is the class of a run of rows (rows ≥ 1): ⌊log2 rows⌋.
func sizeClassOf(rows int64) int {
	if rows < 1 {
		return 0
	}
	return bits.Len64(uint64(rows)) - 1
}

// Limit is the most rows a merged run may hold now.
func (t *sizeTuner) Limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limit
}

// Observe records a run of rows over elements input elements that took d.
// It returns the new limit and whether it changed.
func (t *sizeTuner) Observe(rows, elements int64, d time.Duration) (int, bool) {
	if rows < 1 || elements < 1 || d <= 0 {
		return t.Limit(), false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := min(sizeClassOf(rows), len(t.classes)-1)
	cost := float64(d.Nanoseconds()) / float64(elements)
	cl := &t.classes[c]
	if cl.samples == 0 {
		cl.perElement = cost
	} else {
		cl.perElement += tunerAlpha * (cost - cl.perElement)
	}
	cl.samples++
	t.sinceChange++
	return t.adjustLocked()
}

func (t *sizeTuner) adjustLocked() (int, bool) {
	c := sizeClassOf(int64(t.limit))
	if c == 0 {
		if t.maxRows > 1 && t.sinceChange >= tunerProbeEvery {
			t.classes[1].samples = 0
			return t.setLocked(2), true
		}
		return t.limit, false
	}
	at, below := t.classes[c], t.classes[c-1]
	if at.samples < tunerMinSamples || below.samples < tunerMinSamples {
		return t.limit, false
	}
	switch {
	case at.perElement > below.perElement:
		// The class at the limit is fresh when it is tried again.
		t.classes[c].samples = 0
		return t.setLocked(1 << (c - 1)), true
	case at.perElement < below.perElement*(1-tunerMargin) && t.limit < t.maxRows:
		next := min(1<<(c+1), t.maxRows)
		if nc := sizeClassOf(int64(next)); nc > c {
			t.classes[nc].samples = 0
		}
		return t.setLocked(next), true
	}
	return t.limit, false
}

func (t *sizeTuner) setLocked(limit int) int {
	t.limit = limit
	t.sinceChange = 0
	return limit
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
