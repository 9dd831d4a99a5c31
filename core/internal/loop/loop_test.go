package loop_test

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core/internal/loop"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLoop(t *testing.T) {
	tests := []struct {
		name string
		run  func(l *loop.Loop, ran *atomic.Int32)
		// want is the least number of times the body or step ran before
		// Stop returned; exact says it is also the most.
		want  int32
		exact bool
	}{
		{"stop before start starts nothing", func(l *loop.Loop, ran *atomic.Int32) {
			l.Stop()
			l.Start(time.Millisecond, func() { ran.Add(1) }, func() { ran.Add(1) })
			l.Spawn(func(<-chan struct{}) { ran.Add(1) })
		}, 0, true},
		{"a period of zero starts nothing", func(l *loop.Loop, ran *atomic.Int32) {
			l.Start(0, func() { ran.Add(1) }, func() { ran.Add(1) })
		}, 0, true},
		{"start runs first at once, then steps", func(l *loop.Loop, ran *atomic.Int32) {
			stepped := make(chan struct{}, 1)
			l.Start(time.Millisecond, func() { ran.Add(1) }, func() {
				ran.Add(1)
				select {
				case stepped <- struct{}{}:
				default:
				}
			})
			<-stepped
		}, 2, false},
		{"spawn runs its body until stop", func(l *loop.Loop, ran *atomic.Int32) {
			started := make(chan struct{})
			l.Spawn(func(stop <-chan struct{}) { ran.Add(1); close(started); <-stop })
			<-started
		}, 1, true},
		{"only the first start or spawn counts", func(l *loop.Loop, ran *atomic.Int32) {
			started := make(chan struct{})
			l.Spawn(func(stop <-chan struct{}) { ran.Add(1); close(started); <-stop })
			l.Spawn(func(stop <-chan struct{}) { ran.Add(100); <-stop })
			l.Start(time.Millisecond, func() { ran.Add(100) }, func() { ran.Add(100) })
			<-started
		}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := loop.New()
			var ran atomic.Int32
			tt.run(l, &ran)
			l.Stop()
			l.Stop() // twice is fine
			got := ran.Load()
			if got < tt.want || (tt.exact && got != tt.want) {
				t.Fatalf("ran %d times, want %d (exact: %v)", got, tt.want, tt.exact)
			}
			// Stopped means stopped: nothing runs after Stop returned.
			if again := ran.Load(); again != got {
				t.Fatalf("ran %d times after Stop", again-got)
			}
		})
	}
}
