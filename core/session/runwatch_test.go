package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svc-dev/svc/core"

	ort "github.com/yalue/onnxruntime_go"
)

func newRunOptions(t *testing.T) *ort.RunOptions {
	t.Helper()
	ro, err := ort.NewRunOptions()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Destroy() })
	return ro
}

func (g *runGuard) ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.timedOut || g.canceled
}

func (w *runWatch) inFlight() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, g := range w.runs {
		if g.slot != i {
			return -1, w.watching
		}
	}
	return len(w.runs), w.watching
}

// The run watch's tests run in a synctest bubble: time is the bubble's
// fake clock, which moves only when every goroutine of the bubble is
// blocked, and synctest.Wait returns once the watch's goroutine is blocked
// again, its look done. So each look happens at an exact time, and that a
// run was left alone is proved at the instant of each look, without
// sleeping on the wall clock.

// TestRunWatch: a run whose request is canceled, or whose timeout passes,
// is terminated and says why, at the watch's first look after; the others
// are left alone, whichever order the runs end in; with none in flight the
// watch stops looking, and looks again for the next run.
func TestRunWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = 2 * time.Millisecond
		w := newRunWatch(period)
		defer w.Stop()
		// look lets time run for d and returns once the watch is idle
		// again: it has looked at every multiple of period since the
		// first run began.
		look := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}

		ctx, cancel := context.WithCancel(context.Background())
		canceled := w.begin(ctx, newRunOptions(t), 0)
		late := w.begin(context.Background(), newRunOptions(t), 10*period)
		calm := w.begin(context.Background(), newRunOptions(t), time.Hour)
		plain := w.begin(context.Background(), newRunOptions(t), 0)
		if n, watching := w.inFlight(); n != 4 || !watching {
			t.Fatalf("in flight %d (watching %v), want 4 and watching", n, watching)
		}
		ended := func(g ...*runGuard) (out []bool) {
			for _, g := range g {
				out = append(out, g.ended())
			}
			return out
		}
		look(period - time.Nanosecond)
		if got := ended(canceled, late, calm, plain); slices.Contains(got, true) {
			t.Fatalf("before the first look: ended %v, want none", got)
		}
		cancel()
		steps := []struct {
			name string
			wait time.Duration
			// want: whether canceled, late, calm and plain have ended.
			want []bool
		}{
			{"the first look, after the cancel", time.Nanosecond, []bool{true, false, false, false}},
			{"the last look before late's timeout", 8 * period, []bool{true, false, false, false}},
			{"the look at late's timeout", period, []bool{true, true, false, false}},
			{"many looks later", 1000 * period, []bool{true, true, false, false}},
		}
		for _, st := range steps {
			look(st.wait)
			if got := ended(canceled, late, calm, plain); !slices.Equal(got, st.want) {
				t.Fatalf("%s: ended (canceled, late, calm, plain) %v, want %v", st.name, got, st.want)
			}
		}

		tests := []struct {
			name                   string
			g                      *runGuard
			wantTimedOut, wantCanc bool
		}{
			{"late", late, true, false},
			{"plain", plain, false, false},
			{"canceled", canceled, false, true},
			{"calm", calm, false, false},
		}
		for i, tt := range tests {
			timedOut, canc := w.end(tt.g)
			if timedOut != tt.wantTimedOut || canc != tt.wantCanc {
				t.Errorf("%s: timed out %v, canceled %v; want %v, %v", tt.name, timedOut, canc, tt.wantTimedOut, tt.wantCanc)
			}
			if n, _ := w.inFlight(); n != len(tests)-1-i {
				t.Fatalf("after %s ended: %d in flight (or a run's slot is wrong)", tt.name, n)
			}
		}
		look(period)
		if _, watching := w.inFlight(); watching {
			t.Fatal("the watch still looks with no run in flight")
		}

		// And looks again for the next run, one period after it began.
		ctx2, cancel2 := context.WithCancel(context.Background())
		again := w.begin(ctx2, newRunOptions(t), 0)
		cancel2()
		look(period - time.Nanosecond)
		if again.ended() {
			t.Fatal("a run after an idle spell ended before the watch's next look")
		}
		look(time.Nanosecond)
		if _, canc := w.end(again); !canc {
			t.Fatal("the run after an idle spell: not reported canceled at the next look")
		}
	})
}

// TestRunWatchClose: Stop ends the goroutine, after runs, and more than
// once. The bubble proves that it ended: synctest.Test fails when a
// goroutine of the bubble is left blocked.
func TestRunWatchClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newRunWatch(time.Millisecond)
		g := w.begin(context.Background(), newRunOptions(t), 0)
		time.Sleep(5 * time.Millisecond)
		w.end(g)
		w.Stop()
		w.Stop()
	})
}

// TestPredictCanceledBeforeRun: a request canceled before its run starts
// gets ErrCanceled without a run.
func TestPredictCanceledBeforeRun(t *testing.T) {
	wd, _ := os.Getwd()
	p, err := New(Options{Name: "m", File: filepath.Join(wd, "..", "..", "testdata", "models", "classifier.onnx")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = p.run(ctx, nil, nil)
	if !errors.Is(err, core.ErrCanceled) {
		t.Fatalf("err = %v, want core.ErrCanceled", err)
	}
	if n, _ := p.watch.inFlight(); n != 0 {
		t.Fatalf("%d runs left in flight", n)
	}
}
