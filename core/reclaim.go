package core

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

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
// (see README.md).
type Reclaimer struct {
	*loop
	m     *Model
	after time.Duration
	// reclaimedAt is the count of ended requests when memory was last
	// given back; the loop's goroutine owns it.
	reclaimedAt int64
	// reclaims counts the times memory was given back.
	reclaims atomic.Int64
}

// NewReclaimer watches m; after ≤ 0 makes a Reclaimer that does nothing.
func NewReclaimer(m *Model, after time.Duration) *Reclaimer {
	return &Reclaimer{loop: newLoop(), m: m, after: after}
}

// Start runs the watch, every quarter of the idle period (at least every
// 10 ms), in a goroutine the Reclaimer owns until Stop (once; later calls
// do nothing).
func (r *Reclaimer) Start() {
	period := time.Duration(0)
	if r.after > 0 {
		period = max(r.after/4, 10*time.Millisecond)
	}
	r.start(period, func() {}, r.check)
}

// Reclaims is how many times memory was given back so far.
func (r *Reclaimer) Reclaims() int { return int(r.reclaims.Load()) }

// check gives memory back when the model has been idle for the period
// since the last request ended, once per idle period.
func (r *Reclaimer) check() {
	ended, last := r.m.ended.Load(), r.m.lastEnd.Load()
	if ended == r.reclaimedAt || r.m.InFlight() > 0 || time.Since(time.Unix(0, last)) < r.after {
		return
	}
	tensor.Trim()
	runtime.GC()
	debug.FreeOSMemory()
	r.reclaimedAt = ended
	r.reclaims.Add(1)
}
