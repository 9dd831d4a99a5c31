package core_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// versionRunner is a runner that only describes itself: the generations
// tell apart by its version.
type versionRunner struct{ version string }

func (r versionRunner) Info() core.ModelInfo { return core.ModelInfo{Name: "m", Version: r.version} }
func (versionRunner) Specs() []tensor.Spec   { return nil }
func (versionRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("not for running")
}

// loads is a LoadFunc that counts its loads; load n gets version n and a
// Close that counts too. gate, when set, is waited on by every load after
// the first; fail makes the loads after the first fail.
type loads struct {
	n, closed atomic.Int64
	gate      chan struct{}
	fail      atomic.Bool
}

func (l *loads) load() (core.Loaded, error) {
	n := l.n.Add(1)
	if n > 1 && l.gate != nil {
		<-l.gate
	}
	if n > 1 && l.fail.Load() {
		return core.Loaded{}, errors.New("no such file")
	}
	return core.Loaded{Runner: versionRunner{string(rune('0' + n))}, Close: func() error { l.closed.Add(1); return nil }}, nil
}

// view is what a test preparer derives: the version it saw.
type view struct{ version string }

func prepareView(r core.Runner) (any, error) { return &view{r.Info().Version}, nil }

func started(t *testing.T, l *loads, prepare []core.Preparer, warm func(core.Runner) error) *core.Model {
	t.Helper()
	m := core.NewModel("m")
	m.Start(l.load, prepare, warm, nil)
	<-m.Done()
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// TestReloadSwapsGenerations: a reload makes a new generation current with
// its own views; a request holding the old one keeps it, with its views,
// and the old one closes at its release, not before.
func TestReloadSwapsGenerations(t *testing.T) {
	l := &loads{}
	m := started(t, l, []core.Preparer{prepareView}, nil)
	old, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	var swapped []uint64
	m.OnSwap(func(g *core.Generation) { swapped = append(swapped, g.Seq) })
	res, err := m.Reload(context.Background())
	if err != nil || res.Version != "2" || res.Seq != 2 {
		t.Fatalf("Reload = %+v, %v", res, err)
	}
	if v, ok := core.ViewOf[*view](old); !ok || v.version != "1" || old.Version != "1" {
		t.Fatalf("the held generation's view changed: %+v", v)
	}
	cur, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := core.ViewOf[*view](cur); v.version != "2" || cur.Seq != 2 || len(swapped) != 1 || swapped[0] != 2 {
		t.Fatalf("current view %+v, seq %d, swaps %v", v, cur.Seq, swapped)
	}
	select {
	case <-old.Closed():
		t.Fatal("the old generation closed while a request held it")
	default:
	}
	if l.closed.Load() != 0 {
		t.Fatal("sessions closed while held")
	}
	old.Release()
	<-old.Closed()
	if l.closed.Load() != 1 {
		t.Fatalf("%d closes after the last release, want 1", l.closed.Load())
	}
	cur.Release()
	if st := m.ReloadStatus(); st.Succeeded != 1 || st.Failed != 0 || st.LastError != nil || st.Loading {
		t.Fatalf("status %+v", st)
	}
	if err := m.Close(context.Background()); err != nil || l.closed.Load() != 2 {
		t.Fatalf("Close: %v, %d closes", err, l.closed.Load())
	}
	if _, err := m.Acquire(); !errors.Is(err, core.ErrNotReady) {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

// TestReloadFailures: a load, preparer or warm-up that fails leaves the
// old generation serving, closes what the failed load opened, and is
// reported in the error, the status and the reload hooks.
func TestReloadFailures(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(core.Runner) (any, error)
		warm    func(core.Runner) error
		fail    bool
		want    string
	}{
		{"load", nil, nil, true, "no such file"},
		{"preparer", func(r core.Runner) (any, error) {
			if r.Info().Version != "1" {
				return nil, errors.New("input x: the configuration declares an image")
			}
			return nil, nil
		}, nil, false, "declares an image"},
		{"warm-up", nil, func(r core.Runner) error {
			if r.Info().Version != "1" {
				return errors.New("warm-up: boom")
			}
			return nil
		}, false, "warm-up: boom"},
		{"panic", func(r core.Runner) (any, error) {
			if r.Info().Version != "1" {
				panic("bad model")
			}
			return nil, nil
		}, nil, false, "panic: bad model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &loads{}
			var prepare []core.Preparer
			if tt.prepare != nil {
				prepare = append(prepare, tt.prepare)
			}
			m := started(t, l, prepare, tt.warm)
			var hooked error
			m.OnReload(func(_ core.ReloadResult, err error) { hooked = err })
			l.fail.Store(tt.fail)
			_, err := m.Reload(context.Background())
			var re *core.ReloadError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "keeps serving") {
				t.Fatalf("Reload error %v, want a *ReloadError with %q", err, tt.want)
			}
			if hooked != err {
				t.Fatalf("hook saw %v", hooked)
			}
			if g := m.Current(); g.Version != "1" || g.Seq != 1 || !m.Ready() {
				t.Fatalf("current generation %d (version %s), state %v", g.Seq, g.Version, m.State())
			}
			if st := m.ReloadStatus(); st.Failed != 1 || st.Succeeded != 0 || st.LastError != err {
				t.Fatalf("status %+v", st)
			}
			if want := int64(0); !tt.fail && l.closed.Load() != 1 || tt.fail && l.closed.Load() != want {
				t.Fatalf("%d closes: the failed load's sessions must close", l.closed.Load())
			}
			// A reload that succeeds clears the failure.
			l.fail.Store(false)
			if tt.prepare == nil && tt.warm == nil {
				if _, err := m.Reload(context.Background()); err != nil || m.ReloadStatus().LastError != nil {
					t.Fatalf("Reload after the failure: %v, status %+v", err, m.ReloadStatus())
				}
			}
		})
	}
}

// TestReloadTriggersCoalesce: triggers while a load runs wait for one more
// load after it, which they share; the one running is not restarted.
func TestReloadTriggersCoalesce(t *testing.T) {
	l := &loads{gate: make(chan struct{})}
	m := started(t, l, nil, nil)
	first := make(chan core.ReloadResult, 1)
	go func() {
		res, _ := m.Reload(context.Background())
		first <- res
	}()
	waitStatus(t, m, func(st core.ReloadStatus) bool { return st.Waiting == 1 && l.n.Load() == 2 })
	const joiners = 5
	var wg sync.WaitGroup
	results := make([]core.ReloadResult, joiners)
	for i := range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = m.Reload(context.Background())
		}()
	}
	waitStatus(t, m, func(st core.ReloadStatus) bool { return st.Waiting == 1+joiners })
	close(l.gate)
	wg.Wait()
	if res := <-first; res.Seq != 2 {
		t.Fatalf("first reload made generation %d", res.Seq)
	}
	for i, res := range results {
		if res.Seq != 3 || res.Version != "3" {
			t.Fatalf("trigger %d got %+v, want the one load after the first (generation 3)", i, res)
		}
	}
	if n := l.n.Load(); n != 3 {
		t.Fatalf("%d loads for 1 + %d triggers, want 3 (start, the running reload, one shared after it)", n, 1+joiners)
	}
}

// TestReloadRefused: no reload before the model is ready, nor once Close
// has begun.
func TestReloadRefused(t *testing.T) {
	m := core.NewModel("m")
	if _, err := m.Reload(context.Background()); !errors.Is(err, core.ErrNotReady) {
		t.Fatalf("Reload before Start: %v", err)
	}
	l := &loads{}
	m = started(t, l, nil, nil)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reload(context.Background()); !errors.Is(err, core.ErrReloadClosed) {
		t.Fatalf("Reload after Close: %v", err)
	}
}

// waitStatus waits until the reload status satisfies ok: the goroutines
// it waits for are runnable, so yielding lets them get there.
func waitStatus(t *testing.T, m *core.Model, ok func(core.ReloadStatus) bool) {
	t.Helper()
	for !ok(m.ReloadStatus()) {
		runtime.Gosched()
	}
}

// TestReloadWarmUpNeverRan: a model whose warm-up fails at start (its
// made-up inputs do not run) still reloads when the new one's warm-up
// fails the same way; the failure is reported, not fatal to the reload.
func TestReloadWarmUpNeverRan(t *testing.T) {
	l := &loads{}
	var warned atomic.Int64
	m := core.NewModel("m")
	m.Start(l.load, nil, func(core.Runner) error { return errors.New("warm-up: pad needs 2 samples") }, func(error) { warned.Add(1) })
	<-m.Done()
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	res, err := m.Reload(context.Background())
	if err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if res.Version != "2" || m.Current().Version != "2" {
		t.Fatalf("reloaded to %q, serving %q; want 2", res.Version, m.Current().Version)
	}
	if n := warned.Load(); n != 2 {
		t.Fatalf("%d warm-up warnings, want 2 (start and reload)", n)
	}
}

// TestReloadWhileClosing: Close during a reload waits for it to end; the
// reload queued behind it and any asked for once Close has begun are
// refused with ErrReloadClosed (the load answers 503), and no load starts
// after the one running.
func TestReloadWhileClosing(t *testing.T) {
	l := &loads{gate: make(chan struct{})}
	m := core.NewModel("m")
	m.Start(l.load, nil, nil, nil)
	<-m.Done()
	type answer struct {
		res core.ReloadResult
		err error
	}
	running, queued := make(chan answer, 1), make(chan answer, 1)
	go func() { res, err := m.Reload(context.Background()); running <- answer{res, err} }()
	waitStatus(t, m, func(st core.ReloadStatus) bool { return st.Waiting == 1 && l.n.Load() == 2 })
	go func() { res, err := m.Reload(context.Background()); queued <- answer{res, err} }()
	waitStatus(t, m, func(st core.ReloadStatus) bool { return st.Waiting == 2 })
	closed := make(chan error, 1)
	go func() { closed <- m.Close(context.Background()) }()
	// A caller whose context has ended joins the queue and leaves at once
	// until Close has begun; from then on it is refused.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		_, err := m.Reload(ended)
		if errors.Is(err, core.ErrReloadClosed) {
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Reload while Close waits: %v", err)
		}
		runtime.Gosched()
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while a reload ran", err)
	default:
	}
	close(l.gate)
	if a := <-running; a.err != nil || a.res.Version != "2" {
		t.Errorf("the running reload: %+v, %v; want version 2", a.res, a.err)
	}
	if a := <-queued; !errors.Is(a.err, core.ErrReloadClosed) {
		t.Errorf("the queued reload: %+v, %v; want ErrReloadClosed", a.res, a.err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n, c := l.n.Load(), l.closed.Load(); n != 2 || c != 2 {
		t.Errorf("%d loads, %d closed; want 2 and 2 (the queued reload never loads)", n, c)
	}
}

// stuckLoads is a LoadFunc whose load number stuck (the first reload:
// 2) waits for release; every load gets its number as version, and a
// Close that reports that version on closed.
type stuckLoads struct {
	n       atomic.Int64
	stuck   int64
	release chan struct{}
	fail    bool // the stuck load fails once released
	closed  chan string
}

func (l *stuckLoads) load() (core.Loaded, error) {
	n := l.n.Add(1)
	if n == l.stuck {
		<-l.release
		if l.fail {
			return core.Loaded{}, errors.New("no such file")
		}
	}
	v := string(rune('0' + n))
	return core.Loaded{Runner: versionRunner{v}, Close: func() error { l.closed <- v; return nil }}, nil
}

// TestReloadTimeout: a reload whose load has not ended at the timeout
// fails with a *core.ReloadTimeoutError, the old generation serving on and
// the status saying so (not loading); the next reload does not wait for
// the stuck load and succeeds; the stuck load, once it ends, closes what
// it loaded (or reports its failure) and says so to the hook.
func TestReloadTimeout(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "the stuck load ends well", true: "the stuck load fails"}[fail], func(t *testing.T) {
			l := &stuckLoads{stuck: 2, release: make(chan struct{}), fail: fail, closed: make(chan string, 4)}
			m := core.NewModel("m")
			m.SetReloadTimeout(time.Millisecond)
			m.Start(l.load, nil, nil, nil)
			<-m.Done()
			t.Cleanup(func() { _ = m.Close(context.Background()) })
			abandoned := make(chan error, 1)
			m.OnAbandonedEnd(func(_ time.Duration, err error) { abandoned <- err })

			_, err := m.Reload(context.Background())
			var te *core.ReloadTimeoutError
			var re *core.ReloadError
			if !errors.As(err, &te) || !errors.As(err, &re) || te.Timeout != time.Millisecond ||
				!strings.Contains(err.Error(), "keeps serving: the new version did not load within reload.timeout (1ms)") {
				t.Fatalf("Reload past the timeout: %v", err)
			}
			if st := m.ReloadStatus(); st.Loading || st.LastError != err || st.Failed != 1 || st.Abandoned != 1 {
				t.Fatalf("status after the timeout %+v", st)
			}
			if g := m.Current(); g.Seq != 1 || g.Version != "1" {
				t.Fatalf("current generation %d (version %s) after the timeout", g.Seq, g.Version)
			}

			// The next reload loads beside the stuck one.
			m.SetReloadTimeout(time.Hour)
			res, err := m.Reload(context.Background())
			if err != nil || res.Version != "3" || res.Seq != 2 {
				t.Fatalf("Reload after the timeout = %+v, %v; want version 3 as generation 2", res, err)
			}
			if v := <-l.closed; v != "1" {
				t.Fatalf("closed version %s, want the replaced 1", v)
			}
			if st := m.ReloadStatus(); st.LastError != nil || st.Abandoned != 1 {
				t.Fatalf("status after the next reload %+v", st)
			}

			close(l.release)
			if err := <-abandoned; (err != nil) != fail {
				t.Fatalf("the stuck load ended with %v", err)
			}
			if !fail {
				if v := <-l.closed; v != "2" {
					t.Fatalf("closed version %s, want the stuck load's 2", v)
				}
			}
			if g := m.Current(); g.Seq != 2 || g.Version != "3" || m.ReloadStatus().Abandoned != 0 {
				t.Fatalf("current generation %d (version %s), status %+v once the stuck load ended", g.Seq, g.Version, m.ReloadStatus())
			}
		})
	}
}

// TestCloseWaitsForAbandoned: Close waits for a load given up at the
// timeout, and says so when ctx ends first.
func TestCloseWaitsForAbandoned(t *testing.T) {
	l := &stuckLoads{stuck: 2, release: make(chan struct{}), closed: make(chan string, 4)}
	m := core.NewModel("m")
	m.SetReloadTimeout(time.Millisecond)
	m.Start(l.load, nil, nil, nil)
	<-m.Done()
	if _, err := m.Reload(context.Background()); err == nil {
		t.Fatal("the stuck reload succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Close(ctx); err == nil || !strings.Contains(err.Error(), "a reload given up at reload.timeout still loads at shutdown") {
		t.Fatalf("Close with a load stuck: %v", err)
	}
	close(l.release)
	if err := m.Close(context.Background()); err != nil {
		t.Fatalf("Close once released: %v", err)
	}
	got := []string{<-l.closed, <-l.closed}
	if !(got[0] == "1" && got[1] == "2" || got[0] == "2" && got[1] == "1") {
		t.Fatalf("closed %v, want the serving 1 and the stuck 2", got)
	}
}
