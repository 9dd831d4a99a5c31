package sched

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/tensor"
)

// fakeActivity is a model's requests as core.Model counts them.
type fakeActivity struct {
	ended, lastEnd, inFlight atomic.Int64
}

func (a *fakeActivity) Ended() (int64, time.Time) {
	return a.ended.Load(), time.Unix(0, a.lastEnd.Load())
}

func (a *fakeActivity) InFlight() int64 { return a.inFlight.Load() }

// end ends a request at t.
func (a *fakeActivity) end(t time.Time) {
	a.lastEnd.Store(t.UnixNano())
	a.ended.Add(1)
}

// TestReclaimerGivesMemoryBackOncePerIdlePeriod drives the reclaimer's
// checks by hand on a made-up clock.
func TestReclaimerGivesMemoryBackOncePerIdlePeriod(t *testing.T) {
	const after = 30 * time.Second
	m := &fakeActivity{}
	r := NewReclaimer(m, after)
	t0 := time.Unix(1_000_000, 0)
	steps := []struct {
		name string
		// do changes the model's requests before the check at now.
		do   func()
		now  time.Time
		want bool
	}{
		{"nothing served yet: nothing to give back", func() {}, t0.Add(time.Hour), false},
		{"a request ended: not idle for long enough yet", func() { m.end(t0) }, t0.Add(after - time.Nanosecond), false},
		{"idle for the period: memory goes back", func() {}, t0.Add(after), true},
		{"once per idle period", func() {}, t0.Add(2 * after), false},
		{"a request in flight holds it off, however long it runs", func() {
			m.inFlight.Add(1)
			m.end(t0.Add(3 * after))
		}, t0.Add(10 * after), false},
		{"once it ends and the period passes: again", func() {
			m.inFlight.Add(-1)
			m.end(t0.Add(10 * after))
		}, t0.Add(11 * after), true},
	}
	for _, s := range steps {
		s.do()
		if s.want {
			// What a request gave back to the tensor pools is let go.
			tensor.PutSlice(tensor.MakeSlice[byte](tensor.MinPooled))
		}
		if got := r.check(s.now); got != s.want {
			t.Fatalf("%s: reclaimed %v, want %v", s.name, got, s.want)
		}
		// Released: given back, and no request ended since.
		if released := r.Released(); released != (s.want || s.name == "once per idle period") {
			t.Fatalf("%s: Released() = %v", s.name, released)
		}
		if s.want {
			if n, bytes := tensor.Retained(); n != 0 {
				t.Fatalf("%s: the tensor pools hold %d buffers (%d bytes) after the reclaim", s.name, n, bytes)
			}
		}
	}
	if n := r.Reclaims(); n != 2 {
		t.Fatalf("%d reclaims, want 2", n)
	}
}

// TestReclaimerStartStop: off (after ≤ 0), the reclaimer starts nothing;
// Stop may come twice, and before Start, which then starts nothing. The
// package's leak check asserts no goroutine outlives Stop.
func TestReclaimerStartStop(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		run   func(r *Reclaimer)
	}{
		{"off", 0, func(r *Reclaimer) { r.Start(); r.Stop(); r.Stop() }},
		{"on", time.Hour, func(r *Reclaimer) { r.Start(); r.Start(); r.Stop(); r.Stop() }},
		{"stopped before it started", time.Millisecond, func(r *Reclaimer) { r.Stop(); r.Start(); r.Stop() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeActivity{}
			m.end(time.Unix(0, 0))
			r := NewReclaimer(m, tt.after)
			tt.run(r)
			if n := r.Reclaims(); n != 0 {
				t.Fatalf("%d reclaims", n)
			}
		})
	}
}
