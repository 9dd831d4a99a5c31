// Package supervisor runs svc as a supervisor process with N worker
// processes that share one listening socket. The supervisor binds the port
// once, passes the socket to each worker (an inherited file descriptor),
// restarts workers that exit, and drains them all on shutdown.
package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
)

// Environment and file descriptors shared between supervisor and worker.
const (
	// WorkerEnv holds the worker id (1..N) in a worker process.
	WorkerEnv = "SVC_WORKER_ID"
	// WorkersEnv holds the number of workers.
	WorkersEnv = "SVC_WORKERS"
	// listenerFD is the inherited listening socket (ExtraFiles[0]).
	listenerFD = 3
	// WorkerIDHeader names the worker that served a response.
	WorkerIDHeader = "X-Worker-Id"
	// statusFD is the pipe a worker reports readiness or failure on
	// (ExtraFiles[1]).
	statusFD = 4
)

// Status is the one message a worker sends its supervisor after start-up.
type Status struct {
	// Ready is true once the worker serves; otherwise Error says why it
	// could not start.
	Ready bool   `json:"ready"`
	Error string `json:"error,omitempty"`
	// Info is what the supervisor prints in its banner.
	Info json.RawMessage `json:"info,omitempty"`
}

// Worker describes this process when it runs as a worker.
type Worker struct {
	ID, Count int
}

// CurrentWorker reports whether this process is a worker, and which.
func CurrentWorker() (Worker, bool) {
	id, err := strconv.Atoi(os.Getenv(WorkerEnv))
	if err != nil || id < 1 {
		return Worker{}, false
	}
	n, err := strconv.Atoi(os.Getenv(WorkersEnv))
	if err != nil || n < 1 {
		n = 1
	}
	return Worker{ID: id, Count: n}, true
}

// Listener returns the socket inherited from the supervisor.
func (Worker) Listener() (net.Listener, error) {
	f := os.NewFile(listenerFD, "svc-listener")
	if f == nil {
		return nil, errors.New("worker: no inherited listener")
	}
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("worker: inherited listener: %w", err)
	}
	return ln, nil
}

// Report sends the start-up status to the supervisor. It is called once.
func (Worker) Report(s Status) error {
	f := os.NewFile(statusFD, "svc-status")
	if f == nil {
		return errors.New("worker: no status pipe")
	}
	defer f.Close()
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}
