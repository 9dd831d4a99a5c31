package browser_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/ci/browser"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

// repoRoot is the svc repository: this module lives in ci/browser.
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

// TestDocsInRealBrowser drives headless Chromium through /docs and /redoc
// of the real server: "Try it out" → "Execute" gets a 200, ReDoc shows the
// input names, and no request leaves the server's origin. Screenshots go to
// build/artifacts/screenshots/.
func TestDocsInRealBrowser(t *testing.T) {
	chromium := chromium(t)
	svc := buildSvc(t)
	for _, m := range []struct{ name, path string }{
		{"demo", filepath.Join(repoRoot, "examples", "demo")},
		{"multi_input", filepath.Join(repoRoot, "testdata", "models", "multi_input.onnx")},
	} {
		t.Run(m.name, func(t *testing.T) {
			s := startServer(t, svc, m.path)
			names := inputNames(t, s.url)
			shots := filepath.Join(repoRoot, "build", "artifacts", "screenshots", m.name)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := browser.RunBrowserChecks(ctx, chromium, s.url, shots, names); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{browser.ShotDocs, browser.ShotExecuted, browser.ShotRedoc} {
				if st, err := os.Stat(filepath.Join(shots, f)); err != nil || st.Size() < 1000 {
					t.Errorf("screenshot %s missing or empty: %v", f, err)
				}
			}
			// The executed request went through the real /predict.
			if n := countPath(s.accessLogs(), "/predict", 200); n < 1 {
				t.Errorf("no successful /predict in the server's log:\n%s", s.stderr.String())
			}
		})
	}
}

// TestDocsUploadPicture: /docs of PaddleOCR cls served from
// examples/ocr/svc.yml offers a file field for its image input; a picture
// of a text line turned over, chosen there and executed, answers the
// label "180".
func TestDocsUploadPicture(t *testing.T) {
	chromium := chromium(t)
	svc := buildSvc(t)
	if _, err := os.Stat(filepath.Join(repoRoot, "build", "models", "paddleocr-cls", "model.onnx")); err != nil {
		t.Fatalf("PaddleOCR cls missing: run 'make models' (make test does it): %v", err)
	}
	s := startServer(t, svc, "cls", "--config", filepath.Join(repoRoot, "examples", "ocr", "svc.yml"))
	shots := filepath.Join(repoRoot, "build", "artifacts", "screenshots", "cls-upload")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	picture := filepath.Join(repoRoot, "examples", "ocr", "line-180.png")
	if err := browser.CheckUpload(ctx, chromium, s.url, shots, "x", picture, `"label": "180"`); err != nil {
		t.Fatal(err)
	}
	if n := countPath(s.accessLogs(), "/predict", 200); n != 1 {
		t.Errorf("%d successful /predict in the server's log, want 1:\n%s", n, s.stderr.String())
	}
}

// buildSvc builds svc (with -race, as the integration tests of cmd/svc
// do) into a temporary directory.
func buildSvc(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svc")
	cmd := exec.Command("go", "build", "-race", "-ldflags", "-w -X main.version=test", "-o", bin, "./cmd/svc")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build svc: %v\n%s", err, out)
	}
	return bin
}

// ortLibrary is the ONNX Runtime library of the tests: $ONNXRUNTIME_TEST_LIB
// (make sets it) or the repository's build/lib/<os>-<arch>.
func ortLibrary(t *testing.T) string {
	t.Helper()
	if os.Getenv(onnxrttest.EnvVar) == "" {
		t.Setenv(onnxrttest.EnvVar, filepath.Join(repoRoot, "build", "lib", runtime.GOOS+"-"+runtime.GOARCH))
	}
	return onnxrttest.LibraryPath(t)
}

// svcServer is a running svc serve.
type svcServer struct {
	url    string
	stderr *syncBuffer
}

var urlLine = regexp.MustCompile(`(?m)^\s+URL\s+(http://\S+)`)

// startServer runs 'svc serve MODEL ARGS' on a free port with JSON logs and
// waits for its banner; the test's cleanup kills it.
func startServer(t *testing.T, svc, model string, args ...string) *svcServer {
	t.Helper()
	cmd := exec.Command(svc, append([]string{"serve", model, "--host", "127.0.0.1", "--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+ortLibrary(t), "SVC_LOG_FORMAT=json")
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	stdout, s := &syncBuffer{}, &svcServer{stderr: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = stdout, s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", svc, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	deadline := time.After(90 * time.Second)
	for {
		if m := urlLine.FindStringSubmatch(stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case err := <-done:
			t.Fatalf("svc exited before serving: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), s.stderr.String())
		case <-deadline:
			t.Fatalf("svc printed no banner in 90 s\nstdout:\n%s\nstderr:\n%s", stdout.String(), s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// inputNames reads the model's input names from GET /info.
func inputNames(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url + "/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Inputs []struct {
			Name string `json:"name"`
		} `json:"inputs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /info: %d %v", resp.StatusCode, err)
	}
	var names []string
	for _, in := range info.Inputs {
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		t.Fatal("GET /info lists no inputs")
	}
	return names
}

// accessLogs returns the server's access log records so far.
func (s *svcServer) accessLogs() []map[string]any {
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

func countPath(records []map[string]any, path string, status int) int {
	n := 0
	for _, r := range records {
		if r["path"] == path && r["status"] == float64(status) {
			n++
		}
	}
	return n
}

// syncBuffer is a goroutine-safe buffer for process output.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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
