//go:build soak

package soak

import (
	"context"
	"errors"
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
	serversFlag  = flag.String("servers", "classifier,multi_input,cls,text-embed,running_sum", "the servers to run, comma-separated (see servers in servers.go)")
	durationFlag = flag.Duration("duration", 10*time.Minute, "how long to run")
	concFlag     = flag.Int("concurrency", 16, "concurrent clients per server")
	workersFlag  = flag.Int("workers", 2, "--workers of each server")
	intervalFlag = flag.Duration("interval", 5*time.Second, "sampling interval of the servers' RSS")
	maxBodyFlag  = flag.String("max-body", "1MiB", "limits.max_body_size of classifier and multi_input (empty: the default, 16 MiB); the other servers keep svc's defaults")
	wsIdleFlag   = flag.Int("ws-idle", 256, "idle WebSocket connections held open against each stateful server")
	wsHalfFlag   = flag.Int("ws-half", 64, "WebSocket connections that announce a 16 MiB frame and send 1 KiB, held open against each stateful server")
	rssFlag      = flag.Int64("rss-bound", 1<<30, "the most bytes one server (supervisor and workers) may reach at its peak")
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

// TestSoak runs svc servers, each with --workers 2, under mixed valid
// traffic, bad requests and the attacks of the bounds review at full
// concurrency for -duration and checks that they hold up: each server
// alive with its first workers, its peak RSS under -rss-bound, every valid
// request answered 200 with the right body, every attack refused (4xx,
// 503 busy, a close; never a 500), workers' memory flat after warm-up, no
// goroutine or file descriptor growth. The result goes to the test log
// and, with -out, into that file's soak section. It reads /proc, so it
// runs on Linux only.
func TestSoak(t *testing.T) {
	root := repoRoot(t)
	o := Options{
		Svc:         inRepo(root, *svcFlag),
		Root:        root,
		Servers:     strings.Split(*serversFlag, ","),
		Duration:    *durationFlag,
		Concurrency: *concFlag,
		Workers:     *workersFlag,
		Interval:    *intervalFlag,
		MaxBody:     *maxBodyFlag,
		WSIdle:      *wsIdleFlag,
		WSHalf:      *wsHalfFlag,
		RSSBound:    *rssFlag,
		Log:         testLog{t},
	}
	out := ""
	if *outFlag != "" {
		// A file whose section cannot be replaced fails now, not after
		// the soak.
		out = inRepo(root, *outFlag)
		old, err := os.ReadFile(out)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if _, err := mdsection.Replace(old, "soak", nil); err != nil {
			t.Fatalf("%s: %v: mend its markers before the soak", out, err)
		}
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
	if out != "" {
		if err := mdsection.WriteFile(out, "soak", []byte(md)); err != nil {
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
