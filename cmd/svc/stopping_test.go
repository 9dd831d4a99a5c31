//go:build unix

package main_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStopUnderLoadDropsNoOne sends SIGTERM to svc while 8 clients each
// open a new connection per request, ten times in a row. Every request
// must get its whole 200 answer, or its connection must be refused by the
// kernel before it was established (once svc stops accepting); a reset, an
// EOF or a short answer on an established connection fails the test, and
// so does an exit code other than 0.
func TestStopUnderLoadDropsNoOne(t *testing.T) {
	t.Parallel()
	skipShort(t, "ten servers stopped under load")
	tests := []struct {
		name string
		args []string
		runs int
	}{
		{"workers 3", []string{"--workers", "3"}, 10},
		{"one process", nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for run := 1; run <= tt.runs; run++ {
				// The first run's server is race-built (under make test),
				// so that the path from SIGTERM to exit is watched for
				// races once; the runs after it repeat the stop for the
				// timings each brings, which the plain build gives as a
				// user's svc has them, at a third of the CPU.
				bin := binFor(t)
				if run > 1 {
					bin = plainBin(t)
				}
				served, afterStop, took := stopUnderLoad(t, bin, tt.args)
				t.Logf("run %d: %d requests answered, %d of them after SIGTERM; svc exited %v after it", run, served, afterStop, took.Round(time.Millisecond))
				if t.Failed() {
					return
				}
			}
		})
	}
}

// stopUnderLoad serves the classifier from bin, sends SIGTERM once the clients have
// had 40 answers and waits for every client to find the port closed; it
// returns how many requests were answered, how many after SIGTERM, and how
// long svc took to exit after it (for the log: nothing depends on it).
func stopUnderLoad(t *testing.T, bin string, args []string) (served, afterStop int, took time.Duration) {
	t.Helper()
	s := startServerBin(t, bin, nil, append([]string{model("classifier.onnx")}, args...)...)
	addr := strings.TrimPrefix(s.URL, "http://")
	const clients, before = 8, 40
	var (
		mu       sync.Mutex
		stopped  bool
		failures []string
		wg       sync.WaitGroup
	)
	enough := make(chan struct{})
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := onePredict(addr)
				mu.Lock()
				switch {
				case err == nil:
					served++
					if stopped {
						afterStop++
					}
					if served == before {
						close(enough)
					}
				case errors.Is(err, errRefused):
					// The server is gone: this client is done.
				default:
					failures = append(failures, err.Error())
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	<-enough
	mu.Lock()
	stopped = true
	mu.Unlock()
	sent := time.Now()
	exited := make(chan time.Duration, 1)
	go func() {
		<-s.done
		exited <- time.Since(sent)
	}()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if code := s.stop(syscall.Signal(0)); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%.3000s", code, s.stderr)
	}
	took = <-exited
	if w := s.logRecords("cannot refuse new connections while draining; a connection that arrives as the listener closes may be reset"); len(w) > 0 {
		t.Errorf("svc could not refuse new connections: %v", w)
	}
	for _, f := range failures {
		t.Errorf("a client's request failed: %s", f)
	}
	return served, afterStop, took
}

// errRefused: the connection was refused before it was established.
var errRefused = errors.New("connection refused")

// onePredict sends one /predict on a new connection and reads the whole
// answer, which must be a 200.
func onePredict(addr string) error {
	conn, err := net.Dial("tcp", addr)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return errRefused
	}
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	// Nothing here should wait for long; a deadline turns a hang into a
	// failure rather than a stuck test.
	_ = conn.SetDeadline(time.Now().Add(patience))
	body := `{"input": [6.7, 3.0, 5.2, 2.3]}`
	req := "POST /predict HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		fmt.Sprintf("Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		return fmt.Errorf("established, then writing the request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return fmt.Errorf("established, request sent, then reading the answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("established, then reading the answer's body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return nil
}
