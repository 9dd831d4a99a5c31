//go:build !windows

package workers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
)

// Reload reloads the workers one at a time, in order, each confirming on
// its socket before the next begins: the others serve meanwhile. Every
// worker is asked, also after one has failed, so that each reports the
// failure in its own index and metrics (a broken file fails them all, and
// each keeps its old model). One pass runs at a time: a request during a
// pass waits for one more pass after it, shared with every other request
// that came during the same pass.
func (s *Supervisor) Reload(ctx context.Context) (core.ReloadResult, error) {
	return s.reloads.Do(ctx, s.reloadPass)
}

func (s *Supervisor) reloadPass() (core.ReloadResult, error) {
	s.mu.Lock()
	ids := make([]int, 0, len(s.procs))
	for id := range s.procs {
		ids = append(ids, id)
	}
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return core.ReloadResult{}, core.ErrReloadClosed
	}
	sort.Ints(ids)
	var res core.ReloadResult
	var failed []string
	modelFailed := false
	for _, id := range ids {
		r, err := s.askWorker(id)
		if err != nil {
			s.log.Error("worker reload failed; it keeps its model", zap.Int("worker", id), zap.Error(err))
			failed = append(failed, fmt.Sprintf("worker %d: %v", id, err))
			var re *core.ReloadError
			modelFailed = modelFailed || errors.As(err, &re)
			continue
		}
		s.log.Info("worker reloaded", zap.Int("worker", id), zap.String("version", r.Version))
		res = r
	}
	switch {
	case modelFailed:
		return res, &core.ReloadError{Model: "", Err: errors.New(strings.Join(failed, "; "))}
	case len(failed) > 0:
		return res, errors.New(strings.Join(failed, "; "))
	}
	return res, nil
}

// answerSlack is how much longer than twice reload.timeout the supervisor
// waits for a worker's answer to a reload.
var answerSlack = 30 * time.Second

// askWorker asks worker id to reload and waits for its answer. A worker
// fails its own reload past reload.timeout, and may have one under way
// when asked (SIGHUP sent to it alone): it answers within twice
// reload.timeout. One that has not answered by then, and answerSlack
// more, is wedged: the pass goes on without it.
func (s *Supervisor) askWorker(id int) (core.ReloadResult, error) {
	wait := 2*s.o.ReloadTimeout + answerSlack
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := askReload(ctx, workerReloadSocket(s.sockets, id))
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return r, fmt.Errorf("no answer within %s (twice reload.timeout, %s, and %s): %w", wait, s.o.ReloadTimeout, answerSlack, err)
	}
	return r, err
}

// serveSupervisorSocket serves supervisor.sock, where workers ask for the
// reload of all.
func (s *Supervisor) serveSupervisorSocket() (*ReloadServer, error) {
	return serveReload(filepath.Join(s.sockets, supervisorSocket), s.Reload)
}
