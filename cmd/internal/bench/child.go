package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Server is an svc serve child process started by svc bench.
type Server struct {
	cmd  *exec.Cmd
	URL  string
	Pid  int
	log  *os.File // the child's stderr (its access log), truncated between levels
	done chan struct{}
	err  error
}

// StartTimeout bounds how long the child may take to load the model.
const StartTimeout = 5 * time.Minute

// stopTimeout bounds a graceful stop before the child is killed.
const stopTimeout = time.Minute

var bannerURL = regexp.MustCompile(`(?m)^[ \t]+URL[ \t]+(http://\S+)[ \t]*\r?\n`)

// StartServer runs exe serve MODEL on 127.0.0.1 and a free port, with
// extra serve flags, and waits until it answers GET /health. Its stderr
// goes to a temporary file, shown when start-up fails.
func StartServer(ctx context.Context, exe, model string, extra []string) (*Server, error) {
	log, err := os.CreateTemp("", "svc-bench-serve-*.log")
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	// The child appends, so truncating the file between levels keeps it
	// small without leaving holes.
	appendLog, err := os.OpenFile(log.Name(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		_ = log.Close()
		_ = os.Remove(log.Name())
		return nil, fmt.Errorf("server log: %w", err)
	}
	defer appendLog.Close()

	args := append([]string{"serve", model, "--host", "127.0.0.1", "--port", "0"}, extra...)
	cmd := exec.Command(exe, args...)
	banner := &bannerWatch{found: make(chan string, 1)}
	cmd.Stdout = banner
	cmd.Stderr = appendLog
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{cmd: cmd, log: log, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("start svc serve: %w", err)
	}
	s.Pid = cmd.Process.Pid
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()

	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case s.URL = <-banner.found:
	case <-s.done:
		err := s.exitError()
		s.cleanup()
		return nil, err
	case <-timer.C:
		s.Stop()
		return nil, fmt.Errorf("svc serve did not start within %v", StartTimeout)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := newClient(5 * time.Second)
	defer c.CloseIdleConnections()
	if err := WaitReady(hctx, c, s.URL); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// exitError describes a child that exited, with the end of its log.
func (s *Server) exitError() error {
	tail := s.logTail(2048)
	if tail == "" {
		return fmt.Errorf("svc serve exited: %v", s.err)
	}
	return fmt.Errorf("svc serve exited (%v): %s", s.err, tail)
}

// Alive returns an error if the child has exited.
func (s *Server) Alive() error {
	select {
	case <-s.done:
		return s.exitError()
	default:
		return nil
	}
}

// TruncateLog empties the child's log file.
func (s *Server) TruncateLog() { _ = s.log.Truncate(0) }

// logTail is the end of the child's log, on one line.
func (s *Server) logTail(n int64) string {
	st, err := s.log.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := s.log.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return clip(string(b), int(n))
}

// Stop sends SIGTERM, waits for the child to drain and exit, and kills it
// if it does not within a minute. It returns the exit error, if any.
func (s *Server) Stop() error {
	defer s.cleanup()
	select {
	case <-s.done:
		return s.err
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = s.cmd.Process.Kill()
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("svc serve did not stop within %v of SIGTERM; killed", stopTimeout)
	}
	if s.err != nil {
		return fmt.Errorf("svc serve: %w", s.err)
	}
	return nil
}

func (s *Server) cleanup() {
	_ = s.log.Close()
	_ = os.Remove(s.log.Name())
}

// bannerWatch reads the child's stdout and reports the URL line of the
// banner once.
type bannerWatch struct {
	mu    sync.Mutex
	buf   []byte
	found chan string
	done  bool
}

func (b *bannerWatch) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	if m := bannerURL.FindSubmatch(b.buf); m != nil {
		b.found <- string(m[1])
		b.done, b.buf = true, nil
	} else if len(b.buf) > 1<<16 {
		b.buf = b.buf[len(b.buf)-1<<12:]
	}
	return len(p), nil
}
