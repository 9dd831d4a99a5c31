// Package loop is the lifecycle of svc's background goroutines (the run
// watch of each session, the scheduler's tuners and its memory reclaimer):
// one goroutine of its own, started once, and Stop, which ends it and
// waits for it.
package loop

import (
	"sync"
	"time"
)

// Loop owns one goroutine. The zero value is not usable: call New.
type Loop struct {
	stop, done  chan struct{}
	begin, halt sync.Once
}

// New returns a loop that has not started.
func New() *Loop {
	return &Loop{stop: make(chan struct{}), done: make(chan struct{})}
}

// Spawn runs body in the loop's goroutine until body returns, which it
// must do once stop is closed. Only the first call of Spawn or Start does
// anything.
func (l *Loop) Spawn(body func(stop <-chan struct{})) {
	l.begin.Do(func() { l.run(body) })
}

// Start calls first, then step every period until Stop, in the loop's
// goroutine. Only the first call of Start or Spawn does anything; a
// period ≤ 0 starts nothing.
func (l *Loop) Start(period time.Duration, first, step func()) {
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

func (l *Loop) run(body func(stop <-chan struct{})) {
	go func() {
		defer close(l.done)
		body(l.stop)
	}()
}

// Stop ends the loop and waits for its goroutine. It may be called more
// than once, and before Start or Spawn (which then start nothing).
func (l *Loop) Stop() {
	l.halt.Do(func() { close(l.stop) })
	l.begin.Do(func() { close(l.done) })
	<-l.done
}
