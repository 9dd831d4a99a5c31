package sched

import (
	"sync"
	"time"
)

// Session kinds a soloChooser picks between.
const (
	narrowSession = iota // one of the pool's sessions (a share of the cores)
	wideSession          // the session with every core of the process
)

// soloChooser decides which session runs a request that has the machine to
// itself (no other run under way): a pool session, with its share of the
// cores, or the wide session, with all of them. More threads cut a large
// model's latency (a convolutional network runs its operators on every
// core), but cost a small one more than they give (handing each operator's
// work to pool threads and waiting for them takes longer than the work), so
// the chooser measures: it alternates between the two for the first
// soloTrials runs of each, then sends solo runs to the one with the lower
// moving average of time per input element (the other must be 5 % faster to
// take over), and every soloProbeEvery runs
// tries the other again for soloTrials runs. The first run on each is not
// counted (it pays for ONNX Runtime's lazy initialisation).
//
// A soloChooser is safe for concurrent use.
type soloChooser struct {
	mu sync.Mutex
	// perElement is the moving average of wall time per input element (ns)
	// of solo runs on each kind; samples counts them (the first ignored).
	perElement [2]float64
	samples    [2]int
	// pick is the kind solo runs go to outside trials; probeLeft counts
	// the runs left in a trial of the other kind; since counts the runs
	// since the last trial.
	pick      int
	probeLeft int
	since     int
}

const (
	soloTrials     = 8
	soloProbeEvery = 256
	soloAlpha      = 0.2
	soloMargin     = 0.05
)

// Next is the kind the next solo run should use.
func (c *soloChooser) Next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.samples[narrowSession] <= soloTrials || c.samples[wideSession] <= soloTrials:
		// Exploring: alternate, the kind with fewer samples first.
		if c.samples[wideSession] < c.samples[narrowSession] {
			return wideSession
		}
		return narrowSession
	case c.probeLeft > 0:
		return 1 - c.pick
	}
	return c.pick
}

// Observe records a solo run of kind over elements input elements that
// took d, and returns the kind solo runs now go to and whether that moved.
func (c *soloChooser) Observe(kind int, elements int64, d time.Duration) (int, bool) {
	if elements < 1 || d <= 0 || (kind != narrowSession && kind != wideSession) {
		return c.Pick(), false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples[kind]++
	cost := float64(d.Nanoseconds()) / float64(elements)
	switch c.samples[kind] {
	case 1:
		// Lazy initialisation: not counted.
	case 2:
		c.perElement[kind] = cost
	default:
		c.perElement[kind] += soloAlpha * (cost - c.perElement[kind])
	}
	if c.samples[narrowSession] <= soloTrials || c.samples[wideSession] <= soloTrials {
		return c.pick, false
	}
	if kind != c.pick && c.probeLeft > 0 {
		c.probeLeft--
	}
	c.since++
	if c.probeLeft == 0 && c.since >= soloProbeEvery {
		c.probeLeft, c.since = soloTrials, 0
	}
	// The other kind must be cheaper by soloMargin to take over, so that
	// noise does not move solo runs back and forth.
	best := c.pick
	if c.perElement[1-c.pick] < c.perElement[c.pick]*(1-soloMargin) {
		best = 1 - c.pick
	}
	moved := best != c.pick
	if moved {
		c.probeLeft = 0
	}
	c.pick = best
	return best, moved
}

// Pick is the kind solo runs go to outside trials.
func (c *soloChooser) Pick() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pick
}
