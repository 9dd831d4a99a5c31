// Package workers runs svc as a supervisor process with N worker
// processes (--workers) that share the listening sockets. The supervisor
// binds the ports once, passes the sockets to each worker (inherited file
// descriptors), restarts workers that exit, reloads them one at a time
// over private sockets, and drains them all on shutdown. Its subpackage
// seqroute sends a sequence's steps to the worker that holds its state.
package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Environment and file descriptors shared between supervisor and worker.
const (
	// WorkerEnv holds the worker id (1..N) in a worker process.
	WorkerEnv = "SVC_WORKER_ID"
	// WorkersEnv holds the number of workers.
	WorkersEnv = "SVC_WORKERS"
	// ReplacementEnv is set for a worker started in place of one that
	// exited.
	ReplacementEnv = "SVC_WORKER_REPLACEMENT"
	// ListenersEnv names the inherited sockets and their descriptors,
	// "http:3,grpc:4"; the status pipe is the descriptor after the last.
	ListenersEnv = "SVC_LISTENERS"
	// SocketsEnv names a directory private to the supervisor's user where
	// each worker may serve what it shares with the others (its metrics)
	// on a Unix socket; the supervisor removes it when it stops.
	SocketsEnv = "SVC_WORKER_SOCKETS"
	// WorkerIDHeader names the worker that served a response.
	WorkerIDHeader = "X-Worker-Id"
	// firstFD is ExtraFiles[0] in the worker.
	firstFD = 3
)

// Named is a listening socket with the name servers ask for it by.
type Named struct {
	Name     string
	Listener *net.TCPListener
}

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
	// Replacement is true for a worker started in place of one that
	// exited: other workers serve meanwhile, so it should not accept
	// connections before its model is ready.
	Replacement bool
	// Sockets is the directory of the workers' private sockets ("" when
	// the supervisor made none).
	Sockets string
	// CPUs are the cores the worker is pinned to (nil: unpinned;
	// runtime.cpu_affinity).
	CPUs []int
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
	return Worker{ID: id, Count: n, Replacement: os.Getenv(ReplacementEnv) == "1",
		Sockets: os.Getenv(SocketsEnv), CPUs: cpusFromEnv()}, true
}

// inherited parses ListenersEnv into names and descriptors, and the status
// pipe's descriptor.
func inherited() (map[string]uintptr, uintptr, error) {
	spec := os.Getenv(ListenersEnv)
	out := map[string]uintptr{}
	last := firstFD - 1
	if spec != "" {
		for _, item := range strings.Split(spec, ",") {
			name, fd, ok := strings.Cut(item, ":")
			n, err := strconv.Atoi(fd)
			if !ok || name == "" || err != nil || n < firstFD {
				return nil, 0, fmt.Errorf("worker: bad %s entry %q", ListenersEnv, item)
			}
			out[name] = uintptr(n)
			last = max(last, n)
		}
	}
	return out, uintptr(last + 1), nil
}

// Listeners returns the sockets inherited from the supervisor, by name.
func (Worker) Listeners() (map[string]net.Listener, error) {
	fds, _, err := inherited()
	if err != nil {
		return nil, err
	}
	out := make(map[string]net.Listener, len(fds))
	for name, fd := range fds {
		f := os.NewFile(fd, "svc-listener-"+name)
		if f == nil {
			return nil, fmt.Errorf("worker: no inherited %q listener", name)
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("worker: inherited %q listener: %w", name, err)
		}
		out[name] = ln
	}
	return out, nil
}

// Report sends the start-up status to the supervisor. It is called once.
func (Worker) Report(s Status) error {
	_, statusFD, err := inherited()
	if err != nil {
		return err
	}
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
