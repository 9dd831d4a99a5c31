package core

import (
	"sync"
	"time"
)

// loop is the lifecycle of the model's background goroutines (Reclaimer,
// ProcTuner, runWatch): one goroutine of its own, started once, and Stop,
// which ends it and waits for it.
type loop struct {
	stop, done  chan struct{}
	begin, halt sync.Once
}

func newLoop() *loop {
	return &loop{stop: make(chan struct{}), done: make(chan struct{})}
}

// spawn runs body in the loop's goroutine until body returns, which it
// must do once stop is closed. Only the first call of spawn or start does
// anything.
func (l *loop) spawn(body func(stop <-chan struct{})) {
	l.begin.Do(func() { l.run(body) })
}

// start calls first, then step every period until Stop, in the loop's
// goroutine. Only the first call of start or spawn does anything; a period
// ≤ 0 starts nothing.
func (l *loop) start(period time.Duration, first, step func()) {
	l.begin.Do(func() {
		if period <= 0 {
			close(l.done)
			return
		}
		first()
		l.run(func(stop <-chan struct{}) {
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					step()
				}
			}
		})
	})
}

func (l *loop) run(body func(stop <-chan struct{})) {
	go func() {
		defer close(l.done)
		body(l.stop)
	}()
}

// Stop ends the loop and waits for its goroutine. It may be called more
// than once, and before start or spawn (which then start nothing).
func (l *loop) Stop() {
	l.halt.Do(func() { close(l.stop) })
	l.begin.Do(func() { close(l.done) })
	<-l.done
}
