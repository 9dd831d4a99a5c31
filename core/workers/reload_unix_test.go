//go:build !windows

package workers

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// A fake worker's answer to a reload.
const (
	workerReloads  = "reloads"  // reloads to version 2
	workerFails    = "fails"    // the model fails to load (a *core.ReloadError)
	workerDead     = "dead"     // no reload socket: the process is gone
	workerHangsUp  = "hangs up" // dies while asked: the connection closes unanswered
	workerStopping = "stopping" // shutting down: the reload is refused
	workerSilent   = "silent"   // wedged: never answers, until the asker gives up
)

// fakeWorkers serves a reload socket for each worker in dir as its kind
// says, until the test ends, and returns how often each was asked.
func fakeWorkers(t *testing.T, dir string, kinds []string) []*atomic.Int64 {
	t.Helper()
	asked := make([]*atomic.Int64, len(kinds))
	for i, kind := range kinds {
		id, n := i+1, &atomic.Int64{}
		asked[i] = n
		path := workerReloadSocket(dir, id)
		switch kind {
		case workerDead:
			continue
		case workerHangsUp:
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					n.Add(1)
					_ = c.Close()
				}
			}()
			t.Cleanup(func() { _ = ln.Close(); <-done })
			continue
		}
		rs, err := serveReload(path, func(ctx context.Context) (core.ReloadResult, error) {
			n.Add(1)
			switch kind {
			case workerFails:
				return core.ReloadResult{}, &core.ReloadError{Model: "m", Err: errors.New("model.onnx: no such file")}
			case workerStopping:
				return core.ReloadResult{}, core.ErrReloadClosed
			case workerSilent:
				<-ctx.Done()
				return core.ReloadResult{}, ctx.Err()
			}
			return core.ReloadResult{Version: "2", Seq: 2}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rs.Close() })
	}
	return asked
}

// TestSupervisorReload: a reload asked on the supervisor's socket (as a
// worker's POST .../load does) asks every worker in turn, also after one
// has failed; a model that fails to load is a *core.ReloadError for the
// protocol to answer as such, a worker that is dead or dies while asked is
// a plain error, and a supervisor that is stopping refuses.
func TestSupervisorReload(t *testing.T) {
	tests := []struct {
		name        string
		workers     []string
		stopped     bool
		modelFailed bool
		want        string // in the error ("" = none)
	}{
		{"all reload", []string{workerReloads, workerReloads}, false, false, ""},
		{"the model fails", []string{workerFails, workerReloads, workerFails}, false, true, "worker 1: reload of model 'm' failed; the previous version keeps serving: model.onnx: no such file; worker 3: "},
		{"a worker is dead", []string{workerReloads, workerDead, workerReloads}, false, false, "worker 2: ask reload-2.sock to reload"},
		{"a worker dies while asked", []string{workerHangsUp, workerReloads}, false, false, "worker 1: ask reload-1.sock to reload"},
		{"a worker is stopping", []string{workerReloads, workerStopping}, false, false, "worker 2: the server is shutting down"},
		{"the supervisor is stopping", []string{workerReloads}, true, false, "the server is shutting down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := socketDir()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			asked := fakeWorkers(t, dir, tt.workers)
			s := New(Options{})
			s.sockets, s.stopped = dir, tt.stopped
			for id := range tt.workers {
				s.procs[id+1] = nil
			}
			rs, err := s.serveSupervisorSocket()
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()

			res, err := Worker{Sockets: dir}.Reloader().Reload(context.Background())
			var re *core.ReloadError
			switch {
			case tt.want == "" && (err != nil || res.Version != "2"):
				t.Fatalf("Reload = %+v, %v; want version 2", res, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Reload error %v, want one with %q", err, tt.want)
			case errors.As(err, &re) != tt.modelFailed:
				t.Fatalf("Reload error %v (%T): a *core.ReloadError is %v, want %v", err, err, re != nil, tt.modelFailed)
			}
			for i, n := range asked {
				want := int64(1)
				if tt.stopped || tt.workers[i] == workerDead {
					want = 0
				}
				if got := n.Load(); got != want {
					t.Errorf("worker %d asked %d times, want %d", i+1, got, want)
				}
			}
		})
	}
}

// TestWorkersReloaderNoSupervisor: a worker started without a sockets
// directory cannot ask for a reload of all.
func TestWorkersReloaderNoSupervisor(t *testing.T) {
	if _, err := (Worker{}).Reloader().Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "no supervisor socket") {
		t.Fatalf("Reload = %v", err)
	}
	if rs, err := (Worker{}).ServeReload(nil); rs != nil || err != nil {
		t.Fatalf("ServeReload without sockets = %v, %v", rs, err)
	}
}

// TestSupervisorReloadTimeout: a worker that does not answer a reload
// within twice reload.timeout (and the slack) fails the pass with the
// reason, and the workers after it are still asked (the second here is
// gone: asking it fails too), where before the supervisor waited for it
// as long as for a start-up (10 minutes).
func TestSupervisorReloadTimeout(t *testing.T) {
	defer func(d time.Duration) { answerSlack = d }(answerSlack)
	answerSlack = 0
	dir, err := socketDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fakeWorkers(t, dir, []string{workerSilent, workerDead})
	s := New(Options{ReloadTimeout: time.Millisecond})
	s.sockets = dir
	s.procs[1], s.procs[2] = nil, nil
	// Far longer than the wait: only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.Reload(ctx)
	if err == nil || !strings.Contains(err.Error(), "worker 1: no answer within 2ms (twice reload.timeout, 1ms, and 0s)") ||
		!strings.Contains(err.Error(), "; worker 2: ") {
		t.Fatalf("Reload error %v", err)
	}
}
