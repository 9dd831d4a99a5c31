package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

// svcBin is the svc binary built for the integration tests (with -race
// when they run with it: buildArgs; plainBin is the one without).
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
	build := exec.Command("go", buildArgs(svcBin)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build svc: %v\n", err)
		return 1
	}
	code := m.Run()
	// The servers are gone (each test's cleanup kills its own), and with
	// them every goroutine that watched or talked to one.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "after the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// buildArgs are the arguments of go build for an svc binary at out, with
// extra flags (-tags): with the race detector when the tests have it
// (make test), so that the servers are checked for races too; without it
// under a plain go test, which builds and serves faster.
func buildArgs(out string, extra ...string) []string {
	if raceEnabled {
		extra = append([]string{"-race"}, extra...)
	}
	return plainBuildArgs(out, extra...)
}

// plainBuildArgs are buildArgs without the race detector, whatever the
// tests run with.
func plainBuildArgs(out string, extra ...string) []string {
	args := append([]string{"build"}, extra...)
	return append(args, "-ldflags", "-w -X main.version=test", "-o", out, ".")
}

// binaryBuild is an svc binary built once per test process, on first use,
// beside the harness's binary (in the directory TestMain removes).
type binaryBuild struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// get builds (once) the binary at name, a path under svcBin's directory,
// with go's arguments args(path) (buildArgs or plainBuildArgs), and
// returns its path.
func (b *binaryBuild) get(t *testing.T, name string, args func(out string) []string) string {
	t.Helper()
	b.once.Do(func() {
		b.bin = filepath.Join(filepath.Dir(svcBin), name)
		if b.err = os.MkdirAll(filepath.Dir(b.bin), 0o755); b.err != nil {
			return
		}
		b.out, b.err = exec.Command("go", args(b.bin)...).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", name, b.err, b.out)
	}
	return b.bin
}

// plainBuild is svc without the race detector, as svc in a folder of its
// own (a test may put that folder on PATH).
var plainBuild binaryBuild

// plainBin builds (once) svc without the race detector: the server of the
// memory tests (bounds_test.go), whose shadow memory would multiply what
// they measure, and of the tests marked by sequential. Under a plain go
// test it is svcBin itself.
func plainBin(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return svcBin
	}
	return plainBuild.get(t, filepath.Join("plain", "svc"), func(out string) []string { return plainBuildArgs(out) })
}

// sequentialTests holds the names of the tests marked by sequential.
var sequentialTests sync.Map

// sequential marks t, subtests and all: it sends its servers one request
// at a time, or runs commands that exit, so the race detector in them
// would watch no two requests at once, and it serves them from the build
// without it (plainBin), which runs them 2–10 times faster (svcCmd,
// startServerEnv). Concurrency stays tested with race-built servers: the
// tests of concurrent clients, batching, workers, reloads, streams,
// deadlines, drain, the cache, the loggers and adversarial traffic leave
// themselves unmarked, and every package's own tests run with -race.
func sequential(t *testing.T) {
	t.Helper()
	sequentialTests.Store(topTest(t), true)
}

// binFor is the svc binary that t's servers and commands run: the plain
// build for a test marked by sequential, svcBin otherwise.
func binFor(t *testing.T) string {
	t.Helper()
	if _, ok := sequentialTests.Load(topTest(t)); ok {
		return plainBin(t)
	}
	return svcBin
}

// topTest is the name of t's top-level test.
func topTest(t *testing.T) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// skipShort skips t under go test -short, the fast tier (Go and the
// fetched ONNX Runtime only, a few minutes on two cores), saying why: what
// the test needs beyond that, or that it takes long. make test runs it.
func skipShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s; the full suite (make test) runs it", why)
	}
}

// patience bounds every wait for something a server or another process
// does: far longer than it takes on a loaded machine, it only turns a hang
// into a failure.
const patience = 2 * time.Minute

// model returns the path of a committed test model.
func model(name string) string { return filepath.Join(repoRoot, "testdata", "models", name) }

// thirdParty returns the path of a model fetched by 'make models'.
func thirdParty(t *testing.T, name string) string {
	t.Helper()
	skipShort(t, "needs the third-party model "+name+" (make models)")
	p := filepath.Join(repoRoot, "build", "models", name, "model.onnx")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("third-party model %s missing at %s: run 'make models' (make test does it)", name, p)
	}
	return p
}

// syncBuffer is a goroutine-safe buffer for process output; each write
// wakes whoever waits for more (waitFor).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// grew is closed at the next write (nil: nobody waits).
	grew chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew != nil {
		close(s.grew)
		s.grew = nil
	}
	return s.b.Write(p)
}

// next returns the contents so far and a channel closed at the next write.
func (s *syncBuffer) next() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew == nil {
		s.grew = make(chan struct{})
	}
	return s.b.String(), s.grew
}

// waitFor waits until done holds of the contents of s, checking them at
// each write, and returns them. exited (nil: never) is closed when the
// writer is gone: once it is, the contents are final. It fails t when they
// are final or patience has passed without done holding; what says what
// was awaited.
func (s *syncBuffer) waitFor(t testing.TB, exited <-chan struct{}, what string, done func(string) bool) string {
	t.Helper()
	var out string
	await(t, exited, what, func() (<-chan struct{}, error) {
		var grew <-chan struct{}
		out, grew = s.next()
		if done(out) {
			return nil, nil
		}
		return grew, fmt.Errorf("the output so far:\n%s", out)
	})
	return out
}

// pollEvery is how often waitUntil checks a condition that nothing
// announces (a gauge on /metrics, a process's state in /proc).
const pollEvery = 10 * time.Millisecond

// waitUntil is the tests' one wait for a condition that they cannot be
// told of: it checks cond at once and then every pollEvery until cond
// returns nil. It fails t when patience passes first, or when exited (nil:
// never) is closed first (the process or call that would make cond hold
// has ended) and cond still fails; what names what is awaited, and the
// failure adds cond's last error, which says what it saw instead. Where an
// event tells when to look again (a write: syncBuffer.waitFor), the wait
// is the same, on that event.
func waitUntil(t testing.TB, exited <-chan struct{}, what string, cond func() error) {
	t.Helper()
	await(t, exited, what, func() (<-chan time.Time, error) {
		if err := cond(); err != nil {
			return time.After(pollEvery), err
		}
		return nil, nil
	})
}

// await is the loop of waitUntil and syncBuffer.waitFor: check returns
// nil when what is awaited holds, or else a channel that says when to
// check again and what it sees instead.
func await[T any](t testing.TB, exited <-chan struct{}, what string, check func() (<-chan T, error)) {
	t.Helper()
	timeout := time.NewTimer(patience)
	defer timeout.Stop()
	for {
		again, err := check()
		if err == nil {
			return
		}
		select {
		case <-again:
		case <-exited:
			if _, err = check(); err == nil {
				return
			}
			t.Fatalf("%s: what would bring it has ended (the process exited, or the call returned)\n%v", what, err)
		case <-timeout.C:
			t.Fatalf("%s: not after %v\n%v", what, patience, err)
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ports hands out the ports that a test names before its server starts
// (the gRPC port, which svc does not pick itself: 0 turns gRPC off). They
// come from below the kernel's ephemeral range, where neither a listener
// on port 0 (every server's HTTP port) nor a client's connection ever
// lands, one after the other from a random start: tests running in
// parallel never get the same port, and a test process beside this one
// (another package's, another checkout's) is unlikely to walk the same
// ones. Each is checked free as it is handed out.
var ports struct {
	mu       sync.Mutex
	low, end int // the range: [low, end)
	next     int
}

// freePort returns a port for a server of t to listen on.
func freePort(t testing.TB) string {
	t.Helper()
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.end == 0 {
		ports.low, ports.end = 10000, ephemeralLow(t)
		if ports.end-ports.low < 1000 {
			t.Fatalf("the kernel's ephemeral ports begin at %d: too few below them for the tests' servers", ports.end)
		}
		ports.next = ports.low + rand.IntN(ports.end-ports.low)
	}
	for range ports.end - ports.low {
		p := ports.next
		if ports.next++; ports.next == ports.end {
			ports.next = ports.low
		}
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			_ = ln.Close()
			return strconv.Itoa(p)
		}
	}
	t.Fatalf("no free port in [%d, %d)", ports.low, ports.end)
	return ""
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	low, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("ip_local_port_range %q: %v", b, err)
	}
	return low
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
// env adds to the test's environment: NAME=value sets a variable, a bare
// NAME removes it (the test's own environment is left alone, so that tests
// can run in parallel).
func svcCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binFor(t), args...)
	cmd.Env = childEnv(append([]string{"ONNXRUNTIME_LIB=" + ortLib, "SVC_LOG_FORMAT=json"}, env...))
	cmd.Dir = t.TempDir()
	// Its own process group, so that kill reaches the workers too (one a
	// test stopped with SIGSTOP ignores the supervisor's death until it is
	// continued, and would hold the output pipes open); and Wait gives up
	// on the pipes a while after the process is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// childEnv is the test's environment with env applied: NAME=value sets
// NAME, a bare NAME removes it.
func childEnv(env []string) []string {
	out := os.Environ()
	for _, kv := range env {
		name, _, set := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if set {
			out = append(out, kv)
		}
	}
	return out
}

// startServer runs 'svc serve' on a free port and waits for its banner.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

func startServerEnv(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	return startServerBin(t, binFor(t), env, args...)
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
	timeout := time.NewTimer(within)
	defer timeout.Stop()
	for {
		out, grew := s.stdout.next()
		if m := urlLine.FindStringSubmatch(out); m != nil {
			s.URL = m[1]
			s.startLogged()
			return s, nil
		}
		select {
		case <-grew:
		case <-s.done:
			if m := urlLine.FindStringSubmatch(s.stdout.String()); m != nil {
				s.URL = m[1]
				s.startLogged()
				return s, nil
			}
			return nil, fmt.Errorf("svc exited before serving: %v\nstdout:\n%s\nstderr:\n%s", s.err, s.stdout, s.stderr)
		case <-timeout.C:
			return nil, fmt.Errorf("svc did not print its banner within %v\nstdout:\n%s\nstderr:\n%s", within, s.stdout, s.stderr)
		}
	}
}

// workersLine is the banner's number of workers.
var workersLine = regexp.MustCompile(`(?m)^\s+workers\s+(\d+)$`)

// startLogged waits, once the banner is in, until the server's start-up
// log is too. The log records come on stderr before the banner, but through
// another pipe, copied by another goroutine: the last of them ("model
// ready", or the supervisor's "workers ready") tells that all are in.
func (s *server) startLogged() {
	s.t.Helper()
	last := "model ready"
	if m := workersLine.FindStringSubmatch(s.stdout.String()); m != nil && m[1] != "1" {
		last = "workers ready"
	}
	s.waitLog(last, 1, nil)
}

// stopNoPanic stops the server with SIGTERM and checks that it exits 0 and
// logged no panic (all of its log is out once it has exited).
func (s *server) stopNoPanic() {
	s.t.Helper()
	if code := s.stop(syscall.SIGTERM); code != 0 {
		s.t.Errorf("exit code %d after SIGTERM\n%.3000s", code, s.stderr)
	}
	if strings.Contains(s.stderr.String(), "panic") {
		s.t.Errorf("the server logged a panic:\n%.3000s", s.stderr)
	}
}

// logRecords returns the server's log records with message msg so far.
func (s *server) logRecords(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		// Only lines that hold msg are decoded: a server under load logs
		// a great many access lines.
		var m map[string]any
		if strings.Contains(line, msg) && json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// waitLog waits until the server's stderr holds n log records with message
// msg for which match (nil: any) holds, and returns them.
func (s *server) waitLog(msg string, n int, match func(map[string]any) bool) []map[string]any {
	s.t.Helper()
	var recs []map[string]any
	what := fmt.Sprintf("%d %q log record(s)", n, msg)
	s.stderr.waitFor(s.t, s.done, what, func(string) bool {
		recs = recs[:0]
		for _, rec := range s.logRecords(msg) {
			if match == nil || match(rec) {
				recs = append(recs, rec)
			}
		}
		return len(recs) >= n
	})
	return recs
}

// waitBanner waits for the banner of a server started before its model
// loaded (startLoading): the model is ready.
func (s *server) waitBanner() {
	s.t.Helper()
	s.stdout.waitFor(s.t, s.done, "banner", urlLine.MatchString)
	s.startLogged()
}

// waitInFlight waits until n inference requests have begun in the server
// and not ended (svc_inference_in_flight, summed over the workers): held
// requests (holdPredict), which cannot end, have all reached a handler,
// where a drain waits for them.
func (s *server) waitInFlight(n int) {
	s.t.Helper()
	waitGauge(s.t, s, "svc_inference_in_flight", fmt.Sprintf("at least %d", n), func(v float64) bool { return v >= float64(n) })
}

// waitGauge waits until the gauge name on the server's /metrics, summed
// over its workers, is as ok wants it (want says how, for the failure).
func waitGauge(t *testing.T, s *server, name, want string, ok func(float64) bool) {
	t.Helper()
	waitUntil(t, s.done, fmt.Sprintf("%s %s", name, want), func() error {
		r := freshGet(t, s, "/metrics", "Accept", textAccept)
		if r.Status != http.StatusOK {
			t.Fatalf("scrape: %d %s", r.Status, r.Body)
		}
		if got := parseScrape(t, r).sum(name); !ok(got) {
			return fmt.Errorf("%s is %v", name, got)
		}
		return nil
	})
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
	case <-time.After(patience):
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
	case <-time.After(patience):
		_ = cmd.Process.Kill()
		t.Fatalf("svc %v did not exit\nstdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
	}
	return -1, "", ""
}

// heldRequest is a POST /predict of which the server has the head and the
// first byte of the body: its handler has begun and waits for the rest,
// which finish sends.
type heldRequest struct {
	conn net.Conn
	rest string
}

// dial opens a TCP connection to s, closed when t ends.
func (s *server) dial(t *testing.T) net.Conn {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// holdPredict sends the head of a POST /predict of body and its first byte.
func holdPredict(t *testing.T, s *server, body string) *heldRequest {
	t.Helper()
	conn := s.dial(t)
	head := fmt.Sprintf("POST /predict HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", conn.RemoteAddr(), len(body))
	if _, err := io.WriteString(conn, head+body[:1]); err != nil {
		t.Fatal(err)
	}
	return &heldRequest{conn: conn, rest: body[1:]}
}

// finish sends the rest of the body and returns the answer's status.
func (h *heldRequest) finish() (int, error) {
	if _, err := io.WriteString(h.conn, h.rest); err != nil {
		return 0, err
	}
	_ = h.conn.SetReadDeadline(time.Now().Add(patience))
	resp, err := http.ReadResponse(bufio.NewReader(h.conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// finishAll finishes the held requests, concurrently, and returns their
// statuses and errors.
func finishAll(held []*heldRequest) ([]int, []error) {
	statuses, errs := make([]int, len(held)), make([]error, len(held))
	var wg sync.WaitGroup
	for i, h := range held {
		wg.Go(func() { statuses[i], errs[i] = h.finish() })
	}
	wg.Wait()
	return statuses, errs
}
