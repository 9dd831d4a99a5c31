package core

import (
	"sync"
	"time"
)

// loop runs a step at a fixed period in a goroutine it owns, from start to
// Stop: the shape of the model's background watchers (Reclaimer,
// ProcTuner).
type loop struct {
	stop, done  chan struct{}
	begin, halt sync.Once
}

func newLoop() *loop {
	return &loop{stop: make(chan struct{}), done: make(chan struct{})}
}

// start calls first, then step every period until Stop, in a goroutine of
// the loop's own. Only the first call does anything; a period ≤ 0 starts
// nothing.
func (l *loop) start(period time.Duration, first, step func()) {
	l.begin.Do(func() {
		if period <= 0 {
			close(l.done)
			return
		}
		first()
		go func() {
			defer close(l.done)
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				select {
				case <-l.stop:
					return
				case <-tick.C:
					step()
				}
			}
		}()
	})
}

// Stop ends the loop and waits for its goroutine. It may be called more
// than once, and before start (which then starts nothing).
func (l *loop) Stop() {
	l.halt.Do(func() { close(l.stop) })
	l.begin.Do(func() { close(l.done) })
	<-l.done
}
