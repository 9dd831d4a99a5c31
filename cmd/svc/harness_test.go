package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

// svcBin is the svc binary built (with -race) for the integration tests.
var (
	svcBin   string
	ortLib   string // the ONNX Runtime library file
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	lib, err := onnxrttest.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ortLib = lib
	tmp, err := os.MkdirTemp("", "svc-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	svcBin = filepath.Join(tmp, "svc")
	build := exec.Command("go", "build", "-race", "-ldflags", "-X main.version=test", "-o", svcBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build svc: %v\n", err)
		return 1
	}
	return m.Run()
}

// model returns the path of a committed test model.
func model(name string) string { return filepath.Join(repoRoot, "testdata", "models", name) }

// thirdParty returns the path of a model fetched by 'make models'.
func thirdParty(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot, "build", "models", name, "model.onnx")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("third-party model %s missing at %s: run 'make models' (make test does it)", name, p)
	}
	return p
}

// syncBuffer is a goroutine-safe buffer for process output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a running svc process.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	URL    string
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

var urlLine = regexp.MustCompile(`(?m)^\s+URL\s+(http://\S+)`)

// svcCmd prepares an svc command with the test library in the environment.
func svcCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(svcBin, args...)
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+ortLib, "SVC_LOG_FORMAT=json")
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = t.TempDir()
	// Its own process group, so that kill reaches the workers too (one a
	// test stopped with SIGSTOP ignores the supervisor's death until it is
	// continued, and would hold the output pipes open); and Wait gives up
	// on the pipes a while after the process is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// startServer runs 'svc serve' on a free port and waits for its banner.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

func startServerEnv(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	return startServerBin(t, svcBin, env, args...)
}

// startServerBin runs 'bin serve' (svcBin or another build) on a free port
// and waits for its banner.
func startServerBin(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	return startServerWithin(t, 90*time.Second, bin, env, args...)
}

// startServerWithin is startServerBin with a deadline for the banner (which
// comes once the model has loaded and warmed up).
func startServerWithin(t *testing.T, within time.Duration, bin string, env []string, args ...string) *server {
	t.Helper()
	full := append([]string{"serve"}, args...)
	full = append(full, "--host", "127.0.0.1", "--port", "0")
	cmd := svcCmd(t, env, full...)
	cmd.Path, cmd.Args[0] = bin, bin
	return launchServer(t, within, cmd)
}

// launchServer starts a prepared server command (in a process group of its
// own) and waits up to within for its banner's URL.
func launchServer(t *testing.T, within time.Duration, cmd *exec.Cmd) *server {
	t.Helper()
	s, err := tryLaunchServer(t, within, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryLaunchServer is launchServer returning what went wrong.
func tryLaunchServer(t *testing.T, within time.Duration, cmd *exec.Cmd) (*server, error) {
	t.Helper()
	s := &server{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.kill)
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m := urlLine.FindStringSubmatch(s.stdout.String()); m != nil {
			s.URL = m[1]
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("svc exited before serving: %v\nstdout:\n%s\nstderr:\n%s", s.err, s.stdout, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("svc did not print its banner in time\nstdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
}

func (s *server) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	// The whole group: the server and its workers, stopped ones included.
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = s.cmd.Process.Kill()
	}
	<-s.done
}

// stop sends sig and waits for the exit code.
func (s *server) stop(sig syscall.Signal) int {
	s.t.Helper()
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("svc did not exit after %v", sig)
	}
	if s.err == nil {
		return 0
	}
	if ee, ok := s.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	s.t.Fatalf("wait: %v", s.err)
	return -1
}

// response is a decoded HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Detail returns the error body's detail, failing if the body is not
// exactly {"detail": string}.
func (r response) Detail(t *testing.T) string {
	t.Helper()
	m := r.JSON(t)
	d, ok := m["detail"].(string)
	if !ok || len(m) != 1 {
		t.Fatalf("error body is not {\"detail\": string}: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type = %q, want application/json", ct)
	}
	return d
}

var client = &http.Client{Timeout: 60 * time.Second}

func (s *server) do(method, path, contentType string, body io.Reader, headers ...string) response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("read body: %v", err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (s *server) get(path string) response { return s.do(http.MethodGet, path, "", nil) }

func (s *server) predict(body string) response {
	return s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(body))
}

// accessLogs returns the server's access log records so far.
func (s *server) accessLogs() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// runSvc runs svc to completion and returns exit code, stdout and stderr.
func runSvc(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runCmd(t, svcCmd(t, env, args...))
}

// runCmd runs a prepared command to completion.
func runCmd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	args := cmd.Args
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("svc %v did not exit\nstdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
	}
	return -1, "", ""
}
