package core

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core/tensor"
)

// Reclaimer gives memory back to the operating system once the model has
// been idle for a while after serving. Under load the server keeps request
// buffers in pools and Go keeps freed heap for the next allocation; on an
// idle server no garbage collection runs, so after a burst all of it would
// stay resident. Once no request is in flight and none has ended for the
// idle period, the Reclaimer empties the tensor pools (tensor.Trim), runs a
// collection (which also empties the request buffers' pools' current
// generation), then debug.FreeOSMemory (a second collection, which frees
// what those pools had set aside, and the return of every free page).
// It does so once per idle period, and never while requests run.
//
// Memory ONNX Runtime's arena keeps for activations is not Go's and stays
// (see README.md).
type Reclaimer struct {
	m     *Model
	after time.Duration
	stop  chan struct{}
	done  chan struct{}
	start sync.Once
	halt  sync.Once
	// reclaims counts the times memory was given back.
	reclaims atomic.Int64
}

// NewReclaimer watches m; after ≤ 0 makes a Reclaimer that does nothing.
func NewReclaimer(m *Model, after time.Duration) *Reclaimer {
	return &Reclaimer{m: m, after: after, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start runs the watch in a goroutine the Reclaimer owns until Stop (once;
// later calls do nothing).
func (r *Reclaimer) Start() {
	r.start.Do(func() {
		if r.after <= 0 {
			close(r.done)
			return
		}
		go r.run()
	})
}

// Stop ends the watch and waits for its goroutine. It may be called more
// than once, and before Start (which then starts nothing).
func (r *Reclaimer) Stop() {
	r.halt.Do(func() { close(r.stop) })
	r.start.Do(func() { close(r.done) })
	<-r.done
}

// Reclaims is how many times memory was given back so far.
func (r *Reclaimer) Reclaims() int { return int(r.reclaims.Load()) }

func (r *Reclaimer) run() {
	defer close(r.done)
	tick := time.NewTicker(max(r.after/4, 10*time.Millisecond))
	defer tick.Stop()
	var reclaimedAt int64 // requests ended when memory was last given back
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		ended, last := r.m.ended.Load(), r.m.lastEnd.Load()
		if ended == reclaimedAt || r.m.InFlight() > 0 || time.Since(time.Unix(0, last)) < r.after {
			continue
		}
		tensor.Trim()
		runtime.GC()
		debug.FreeOSMemory()
		reclaimedAt = ended
		r.reclaims.Add(1)
	}
}
