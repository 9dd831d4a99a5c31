package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
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

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5 s", what)
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

// TestRunWatch: a run whose request is canceled, or whose timeout passes,
// is terminated and says why; the others are left alone, whichever order
// the runs end in; with none in flight the watch stops looking.
func TestRunWatch(t *testing.T) {
	w := newRunWatch(2 * time.Millisecond)
	defer w.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	canceled := w.begin(ctx, newRunOptions(t), 0)
	late := w.begin(context.Background(), newRunOptions(t), 20*time.Millisecond)
	calm := w.begin(context.Background(), newRunOptions(t), time.Hour)
	plain := w.begin(context.Background(), newRunOptions(t), 0)
	if n, watching := w.inFlight(); n != 4 || !watching {
		t.Fatalf("in flight %d (watching %v), want 4 and watching", n, watching)
	}

	cancel()
	waitFor(t, "the canceled run terminated", canceled.ended)
	waitFor(t, "the late run terminated", late.ended)
	time.Sleep(10 * time.Millisecond) // a few more looks
	if calm.ended() || plain.ended() {
		t.Fatal("a run within its time and with a live request was terminated")
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
	waitFor(t, "the watch stopped looking", func() bool { _, watching := w.inFlight(); return !watching })

	// And looks again for the next run.
	ctx2, cancel2 := context.WithCancel(context.Background())
	again := w.begin(ctx2, newRunOptions(t), 0)
	cancel2()
	waitFor(t, "a run after an idle spell terminated", again.ended)
	if _, canc := w.end(again); !canc {
		t.Fatal("the run after an idle spell: not reported canceled")
	}
}

// TestRunWatchClose: Stop ends the goroutine, after runs, and more than
// once.
func TestRunWatchClose(t *testing.T) {
	w := newRunWatch(time.Millisecond)
	g := w.begin(context.Background(), newRunOptions(t), 0)
	w.end(g)
	done := make(chan struct{})
	go func() { w.Stop(); w.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	// That the goroutine has ended, TestMain's leak check asserts.
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
