package sched

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core/internal/loop"
	"github.com/svc-dev/svc/core/tensor"
)

// Reclaimer gives memory back to the operating system once the model has
// been idle for a while after serving. Under load the server keeps request
// buffers and tensors in pools and Go keeps freed heap for the next
// allocation; on an idle server no garbage collection runs, so after a
// burst all of it would stay resident. Once no request is in flight and
// none has ended for the idle period, the Reclaimer empties the tensor
// pools (tensor.Trim), runs a collection (which also empties the current
// generation of the sync.Pools that remain, such as the JSON decoders'),
// then debug.FreeOSMemory (a second collection, which frees what those
// pools had set aside, and the return of every free page). It does so
// once per idle period, and never while requests run.
//
// Memory ONNX Runtime's arena keeps for activations is not Go's and stays
// (see docs/performance.md, "Memory").
type Reclaimer struct {
	loop  *loop.Loop
	m     Activity
	after time.Duration
	// reclaimedAt is the count of ended requests when memory was last
	// given back; the loop's goroutine writes it.
	reclaimedAt atomic.Int64
	// reclaims counts the times memory was given back.
	reclaims atomic.Int64
}

// Activity is what the Reclaimer watches: core.Model's requests.
type Activity interface {
	// Ended is the number of requests ended so far and when the last one
	// ended.
	Ended() (n int64, last time.Time)
	// InFlight is the number of requests begun and not yet ended.
	InFlight() int64
}

// NewReclaimer watches m; after ≤ 0 makes a Reclaimer that does nothing.
func NewReclaimer(m Activity, after time.Duration) *Reclaimer {
	return &Reclaimer{loop: loop.New(), m: m, after: after}
}

// Start runs the watch, every quarter of the idle period (at least every
// 10 ms), in a goroutine the Reclaimer owns until Stop (once; later calls
// do nothing).
func (r *Reclaimer) Start() {
	period := time.Duration(0)
	if r.after > 0 {
		period = max(r.after/4, 10*time.Millisecond)
	}
	r.loop.Start(period, func() {}, func() { r.check(time.Now()) })
}

// Stop ends the watch and waits for its goroutine. It may be called more
// than once, and before Start.
func (r *Reclaimer) Stop() { r.loop.Stop() }

// Released reports whether memory was given back and no request has ended
// since.
func (r *Reclaimer) Released() bool {
	ended, _ := r.m.Ended()
	return r.reclaims.Load() > 0 && ended == r.reclaimedAt.Load()
}

// Reclaims is how many times memory was given back so far.
func (r *Reclaimer) Reclaims() int { return int(r.reclaims.Load()) }

// check gives memory back when the model has been idle at now for the
// period since the last request ended, once per idle period. It reports
// whether it did.
func (r *Reclaimer) check(now time.Time) bool {
	ended, last := r.m.Ended()
	if ended == r.reclaimedAt.Load() || r.m.InFlight() > 0 || now.Sub(last) < r.after {
		return false
	}
	tensor.Trim()
	runtime.GC()
	debug.FreeOSMemory()
	r.reclaimedAt.Store(ended)
	r.reclaims.Add(1)
	return true
}
