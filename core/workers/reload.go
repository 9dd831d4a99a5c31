package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svc-dev/svc/core"
)

// Hot reload under --workers: the supervisor reloads the workers one at a
// time, so that the others serve meanwhile. Each worker serves a private
// socket (reload-N.sock in the sockets directory) where the supervisor
// asks it to reload and waits for its answer; the supervisor serves
// supervisor.sock there, where a worker that got POST
// /v2/repository/models/NAME/load asks for the reload of all. SIGHUP to the
// supervisor does the same.

// The private sockets' names in the sockets directory.
const (
	supervisorSocket = "supervisor.sock"
	reloadPath       = "/reload"
)

func workerReloadSocket(dir string, id int) string {
	return filepath.Join(dir, "reload-"+strconv.Itoa(id)+".sock")
}

// reloadAnswer is what a reload socket answers.
type reloadAnswer struct {
	Version string `json:"version,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	// Error says why the reload failed; Failed is true when the model
	// failed to load (a *core.ReloadError), false when the reload could
	// not run (not ready, shutting down).
	Error  string `json:"error,omitempty"`
	Failed bool   `json:"failed,omitempty"`
}

func answerOf(res core.ReloadResult, err error) reloadAnswer {
	if err == nil {
		return reloadAnswer{Version: res.Version, Seq: res.Seq}
	}
	var re *core.ReloadError
	return reloadAnswer{Error: err.Error(), Failed: errors.As(err, &re)}
}

// remoteReloadError is a reload that failed in another process.
type remoteReloadError struct{ msg string }

func (e *remoteReloadError) Error() string { return e.msg }

func (a reloadAnswer) result() (core.ReloadResult, error) {
	switch {
	case a.Error == "":
		return core.ReloadResult{Version: a.Version, Seq: a.Seq}, nil
	case a.Failed:
		// The protocol answers a model that failed to load as such.
		return core.ReloadResult{}, &core.ReloadError{Model: "", Err: &remoteReloadError{a.Error}}
	default:
		return core.ReloadResult{}, &remoteReloadError{a.Error}
	}
}

// serveReload serves POST /reload on a new Unix socket at path.
func serveReload(path string, reload func(context.Context) (core.ReloadResult, error)) (*ReloadServer, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale reload socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("reload socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+reloadPath, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(answerOf(reload(r.Context())))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	rs := &ReloadServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(rs.done)
		_ = rs.srv.Serve(ln)
	}()
	return rs, nil
}

// ReloadServer serves a reload socket until Close.
type ReloadServer struct {
	srv  *http.Server
	done chan struct{}
}

// Close stops serving and removes the socket.
func (rs *ReloadServer) Close() error {
	err := rs.srv.Close()
	<-rs.done
	return err
}

// askReload posts a reload to the socket at path and returns its answer.
func askReload(ctx context.Context, path string) (core.ReloadResult, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://svc"+reloadPath, nil)
	if err != nil {
		return core.ReloadResult{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return core.ReloadResult{}, fmt.Errorf("ask %s to reload: %w", filepath.Base(path), err)
	}
	defer resp.Body.Close()
	var a reloadAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return core.ReloadResult{}, fmt.Errorf("reload answer of %s: %w", filepath.Base(path), err)
	}
	return a.result()
}

// ServeReload serves this worker's reload socket, where the supervisor
// asks it to reload its model (nil, nil when the supervisor made no
// sockets directory).
func (w Worker) ServeReload(reload func(context.Context) (core.ReloadResult, error)) (*ReloadServer, error) {
	if w.Sockets == "" {
		return nil, nil
	}
	return serveReload(workerReloadSocket(w.Sockets, w.ID), reload)
}

// Reloader is what a worker hands POST .../load: it asks the supervisor
// to reload every worker, one at a time.
func (w Worker) Reloader() *WorkersReloader { return &WorkersReloader{dir: w.Sockets} }

// WorkersReloader asks the supervisor to reload every worker.
type WorkersReloader struct{ dir string }

// Reload asks the supervisor and waits for every worker to have reloaded.
func (r *WorkersReloader) Reload(ctx context.Context) (core.ReloadResult, error) {
	if r.dir == "" {
		return core.ReloadResult{}, errors.New("no supervisor socket to ask for the reload")
	}
	return askReload(ctx, filepath.Join(r.dir, supervisorSocket))
}
