//go:build !windows

package workers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/svc-dev/svc/core"
)

// Supported reports whether worker processes can share a socket here.
const Supported = true

// ShutdownSignal is what the supervisor sends its workers when the whole
// server stops: each worker turns not ready, keeps accepting for the drain
// delay, then drains the shared socket's queue before it exits. SIGTERM
// (someone else's) stops one worker alone: the others take the queue.
var ShutdownSignal os.Signal = syscall.SIGUSR2

// Options configure a supervisor.
type Options struct {
	// Workers is the number of worker processes.
	Workers int
	// Listeners are the bound sockets the workers share, by name ("http",
	// later "grpc"); each worker asks for its sockets by name.
	Listeners []Named
	// Exe and Args start a worker (normally this binary and its own
	// arguments); Env is added to the worker's environment.
	Exe  string
	Args []string
	Env  []string
	// Stdout and Stderr receive the workers' output (their logs).
	Stdout, Stderr io.Writer
	// Grace bounds how long workers may drain on shutdown.
	Grace time.Duration
	// DrainDelay is how long workers keep accepting, not ready, before
	// they drain (serve.drain_delay).
	DrainDelay time.Duration
	// StartTimeout bounds a worker's start-up.
	StartTimeout time.Duration
	// ReloadTimeout is reload.timeout, which bounds each worker's reload
	// (the worker fails its own past it): the supervisor waits for a
	// worker's answer up to twice as long, and answerSlack more.
	ReloadTimeout time.Duration
	// CPUs pins worker i (from 1) to the cores CPUs[i-1], from its first
	// thread (nil: unpinned; see PlanAffinity).
	CPUs [][]int
	Log  *zap.Logger
}

// StartError is returned when a worker could not start at all.
type StartError struct {
	Worker int
	Msg    string
}

func (e *StartError) Error() string { return fmt.Sprintf("worker %d: %s", e.Worker, e.Msg) }

// Supervisor owns the worker processes.
type Supervisor struct {
	o   Options
	log *zap.Logger

	// sockets is the workers' private socket directory (SocketsEnv).
	sockets string

	mu      sync.Mutex
	procs   map[int]*proc
	stopped bool
	wg      sync.WaitGroup

	reloads core.ReloadQueue
}

// proc is one running worker process.
type proc struct {
	id     int
	cmd    *exec.Cmd
	status chan Status
	exited chan struct{}
	err    error
}

// New prepares a supervisor; Run starts it.
func New(o Options) *Supervisor {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Minute
	}
	if o.ReloadTimeout <= 0 {
		o.ReloadTimeout = 10 * time.Minute
	}
	return &Supervisor{o: o, log: o.Log, procs: map[int]*proc{}}
}

// Run starts every worker and waits until all are ready, then calls ready
// with the first worker's info and supervises until ctx ends; then it stops
// the workers gracefully. A worker that fails to start fails Run (the other
// workers are stopped); later exits are restarted with backoff.
func (s *Supervisor) Run(ctx context.Context, ready func(info json.RawMessage)) error {
	dir, err := socketDir()
	if err != nil {
		return fmt.Errorf("workers' socket directory: %w", err)
	}
	s.sockets = dir
	// After the workers have stopped: it also removes the sockets of
	// workers that were killed.
	defer os.RemoveAll(dir)
	starts := make([]*proc, 0, s.o.Workers)
	for id := 1; id <= s.o.Workers; id++ {
		p, err := s.spawn(id, false)
		if err != nil {
			s.stopAll()
			return err
		}
		starts = append(starts, p)
	}
	var info json.RawMessage
	for _, p := range starts {
		st, err := s.awaitStart(ctx, p)
		if err != nil {
			s.stopAll()
			return err
		}
		if info == nil {
			info = st.Info
		}
	}
	if rs, err := s.serveSupervisorSocket(); err != nil {
		s.log.Warn("no reload socket: POST .../load on a worker cannot reload the workers", zap.Error(err))
	} else {
		defer rs.Close()
	}
	if ready != nil {
		ready(info)
	}
	for _, p := range starts {
		s.wg.Add(1)
		go s.watch(ctx, p)
	}
	<-ctx.Done()
	s.stopAll()
	s.wg.Wait()
	return nil
}

// maxSocketDir bounds the socket directory's path: a Unix socket's path
// has room for about 104 bytes (108 on Linux), and the workers add
// "/worker-N.sock".
const maxSocketDir = 80

// socketDir makes the workers' private socket directory (mode 0700) in the
// temporary directory, or in /tmp when TMPDIR's path is too long for
// socket paths.
func socketDir() (string, error) {
	parent := ""
	if len(os.TempDir()) > maxSocketDir-len("/svc-workers-1234567890") {
		parent = "/tmp"
	}
	return os.MkdirTemp(parent, "svc-workers-")
}

// spawn starts worker id with the shared sockets and a status pipe.
func (s *Supervisor) spawn(id int, replacement bool) (*proc, error) {
	files := make([]*os.File, 0, len(s.o.Listeners)+1)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	names := make([]string, 0, len(s.o.Listeners))
	for _, n := range s.o.Listeners {
		f, err := n.Listener.File()
		if err != nil {
			return nil, fmt.Errorf("share listener %q: %w", n.Name, err)
		}
		names = append(names, n.Name+":"+strconv.Itoa(firstFD+len(files)))
		files = append(files, f)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("status pipe: %w", err)
	}
	files = append(files, pw)
	cmd := exec.Command(s.o.Exe, s.o.Args...)
	cmd.Env = append(os.Environ(), s.o.Env...)
	cmd.Env = append(cmd.Env, WorkerEnv+"="+strconv.Itoa(id), WorkersEnv+"="+strconv.Itoa(s.o.Workers),
		ListenersEnv+"="+strings.Join(names, ","), SocketsEnv+"="+s.sockets)
	if replacement {
		cmd.Env = append(cmd.Env, ReplacementEnv+"=1")
	}
	var cpus []int
	if id-1 < len(s.o.CPUs) {
		cpus = s.o.CPUs[id-1]
		cmd.Env = append(cmd.Env, CPUsEnv+"="+joinCPUs(cpus))
	}
	cmd.ExtraFiles = files
	cmd.Stdout, cmd.Stderr = s.o.Stdout, s.o.Stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := startPinned(cmd, cpus); err != nil {
		pr.Close()
		return nil, fmt.Errorf("start worker %d: %w", id, err)
	}
	p := &proc{id: id, cmd: cmd, status: make(chan Status, 1), exited: make(chan struct{})}
	go func() {
		// The status reader ends when the worker writes its status or
		// exits (closing the pipe).
		defer pr.Close()
		var st Status
		line, err := bufio.NewReader(pr).ReadBytes('\n')
		if err == nil && json.Unmarshal(line, &st) == nil {
			p.status <- st
		}
		close(p.status)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	s.mu.Lock()
	s.procs[id] = p
	s.mu.Unlock()
	if len(cpus) > 0 {
		s.log.Info("worker pinned", zap.Int("worker", id), zap.Int("pid", cmd.Process.Pid), zap.String("cpus", FormatCPUs(cpus)))
	}
	s.log.Debug("worker started", zap.Int("worker", id), zap.Int("pid", cmd.Process.Pid))
	return p, nil
}

// awaitStart waits for a worker's status.
func (s *Supervisor) awaitStart(ctx context.Context, p *proc) (Status, error) {
	timer := time.NewTimer(s.o.StartTimeout)
	defer timer.Stop()
	select {
	case st, ok := <-p.status:
		if ok && st.Ready {
			return st, nil
		}
		if ok && st.Error != "" {
			return st, &StartError{Worker: p.id, Msg: st.Error}
		}
		<-p.exited
		return st, &StartError{Worker: p.id, Msg: "exited during start-up: " + exitReason(p.err)}
	case <-timer.C:
		return Status{}, &StartError{Worker: p.id, Msg: fmt.Sprintf("not ready after %s", s.o.StartTimeout)}
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
}

// watch restarts worker p whenever it exits, with backoff, until ctx ends.
func (s *Supervisor) watch(ctx context.Context, p *proc) {
	defer s.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		started := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-p.exited:
		}
		if s.isStopped() {
			return
		}
		if time.Since(started) > 30*time.Second {
			backoff = 100 * time.Millisecond
		}
		s.log.Warn("worker exited; restarting", zap.Int("worker", p.id), zap.Int("pid", p.cmd.Process.Pid),
			zap.String("reason", exitReason(p.err)), zap.Duration("backoff", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		for {
			np, err := s.spawn(p.id, true)
			if err == nil {
				if _, err = s.awaitStart(ctx, np); err == nil {
					p = np
					s.log.Info("worker restarted", zap.Int("worker", p.id), zap.Int("pid", p.cmd.Process.Pid))
					break
				}
				s.kill(np)
			}
			if ctx.Err() != nil || s.isStopped() {
				return
			}
			backoff = min(backoff*2, 10*time.Second)
			s.log.Error("worker restart failed", zap.Int("worker", p.id), zap.Error(err), zap.Duration("backoff", backoff))
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (s *Supervisor) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// stopAll asks every worker to drain (ShutdownSignal) and waits for them,
// killing those still running after the drain delay and the grace period.
func (s *Supervisor) stopAll() {
	s.mu.Lock()
	s.stopped = true
	procs := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(ShutdownSignal)
	}
	deadline := time.After(s.o.DrainDelay + s.o.Grace + 5*time.Second)
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-deadline:
			s.log.Warn("worker did not drain in time; killing", zap.Int("worker", p.id))
			s.kill(p)
		}
	}
}

// Hurry passes a second stop signal on to the workers (ShutdownSignal
// again): each ends its drain delay early, as a single process does on a
// second SIGTERM. Workers that have not begun stopping are not asked.
func (s *Supervisor) Hurry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		return
	}
	for _, p := range s.procs {
		_ = p.cmd.Process.Signal(ShutdownSignal)
	}
}

func (s *Supervisor) kill(p *proc) {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Pids lists the running workers' process ids by worker id.
func (s *Supervisor) Pids() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for id, p := range s.procs {
		out[id] = p.cmd.Process.Pid
	}
	return out
}

func exitReason(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
		return ee.Error()
	}
	return err.Error()
}
