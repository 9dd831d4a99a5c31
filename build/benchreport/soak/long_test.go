//go:build soak

package soak

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/build/benchreport/mdsection"
)

// The soak's settings (make soak passes -svc, -duration and -out; go test
// ... -args -NAME VALUE). Relative paths are relative to the repository.
var (
	svcFlag      = flag.String("svc", "build/bin/svc", "the svc binary")
	modelsFlag   = flag.String("models", "testdata/models/classifier.onnx,testdata/models/multi_input.onnx", "the two models to serve, comma-separated (classifier and multi_input have traffic mixes)")
	durationFlag = flag.Duration("duration", 10*time.Minute, "how long to run")
	concFlag     = flag.Int("concurrency", 16, "concurrent clients per server")
	workersFlag  = flag.Int("workers", 2, "--workers of each server")
	intervalFlag = flag.Duration("interval", 5*time.Second, "sampling interval of the workers' RSS")
	maxBodyFlag  = flag.String("max-body", "1MiB", "limits.max_body_size of the servers (empty: the default, 16 MiB)")
	outFlag      = flag.String("out", "", "Markdown file whose soak section to replace with the result (BENCHMARKS.md)")
)

// repoRoot is the svc repository: this package is build/benchreport/soak.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// inRepo resolves a path given relative to the repository.
func inRepo(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// TestSoak runs two svc servers, each with --workers 2, under mixed valid
// and bad traffic at full concurrency for -duration and checks that they
// hold up: no 5xx on valid requests, workers' memory flat after warm-up,
// no goroutine or file descriptor growth, the same workers throughout. The
// result goes to the test log and, with -out, into that file's soak
// section. It reads /proc, so it runs on Linux only.
func TestSoak(t *testing.T) {
	root := repoRoot(t)
	o := Options{
		Svc:         inRepo(root, *svcFlag),
		Duration:    *durationFlag,
		Concurrency: *concFlag,
		Workers:     *workersFlag,
		Interval:    *intervalFlag,
		MaxBody:     *maxBodyFlag,
		Log:         testLog{t},
	}
	for _, m := range strings.Split(*modelsFlag, ",") {
		o.Models = append(o.Models, inRepo(root, m))
	}
	// Start-up, the quiescent readings and the shutdown take minutes at
	// most on top of the soak itself.
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+10*time.Minute)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	md := res.Markdown()
	t.Logf("result:\n%s", md)
	if *outFlag != "" {
		if err := mdsection.WriteFile(inRepo(root, *outFlag), "soak", []byte(md)); err != nil {
			t.Fatal(err)
		}
	}
	if !res.Passed() {
		t.Fatalf("the soak failed: %s", strings.Join(res.Failures(), "; "))
	}
}

// testLog passes the soak's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
