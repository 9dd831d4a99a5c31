package stream

import (
	"fmt"
	"sync"
	"time"
)

// watch times a connection's reads, so that a client cannot hold one
// open without sending its steps: with no step under way, a message must
// begin within idle (sequence.max_idle), and a message begun (its first
// frame's header read) must be whole within whole (limits.read_timeout;
// 0: no bound). The connection's loop waits on C and asks expired why.
type watch struct {
	idle, whole time.Duration
	idleWhy     string
	wholeWhy    string
	now         func() time.Time

	mu    sync.Mutex
	t     *time.Timer
	due   time.Time // zero: nothing is timed
	why   string
	busy  int  // messages read whole and not yet answered
	begun bool // a message begun and not yet whole
}

// The reasons a watch closes a connection with (a close frame's reason
// is at most 123 bytes).
const (
	reasonIdle  = "no message for %s (sequence.max_idle): the stream closes and its sequence ends"
	reasonWhole = "a message not whole within %s (limits.read_timeout): the stream closes"
)

// newWatch starts timing the first message; now is the clock (nil:
// time.Now), the timer's wait is real time.
func newWatch(idle, whole time.Duration, now func() time.Time) *watch {
	if now == nil {
		now = time.Now
	}
	w := &watch{idle: idle, whole: whole, idleWhy: fmt.Sprintf(reasonIdle, idle), wholeWhy: fmt.Sprintf(reasonWhole, whole), now: now}
	w.t = time.NewTimer(time.Hour)
	w.t.Stop()
	w.mu.Lock()
	w.set(w.idle, w.idleWhy)
	w.mu.Unlock()
	return w
}

// C fires when a deadline may have passed (expired says).
func (w *watch) C() <-chan time.Time { return w.t.C }

// begin: a message's first frame header is read; the rest must follow
// within whole.
func (w *watch) begin() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.begun = true
	w.set(w.whole, w.wholeWhy)
}

// read: the message is whole; it waits for its answer, and nothing is
// timed until it is answered.
func (w *watch) read() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.begun = false
	w.busy++
	w.set(0, "")
}

// answered: a message is answered; once none waits, the next must begin
// within idle.
func (w *watch) answered() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy--
	if w.busy == 0 && !w.begun {
		w.set(w.idle, w.idleWhy)
	}
}

// expired says why the connection is to close, if a deadline has passed
// (false for a tick that a later event made stale).
func (w *watch) expired() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.due.IsZero() || w.now().Before(w.due) {
		return "", false
	}
	return w.why, true
}

// stop stops the timer.
func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set(0, "")
}

// set times d from now (0: nothing), w.mu held.
func (w *watch) set(d time.Duration, why string) {
	if d <= 0 {
		w.due, w.why = time.Time{}, ""
		w.t.Stop()
		return
	}
	w.due, w.why = w.now().Add(d), why
	w.t.Reset(d)
}
