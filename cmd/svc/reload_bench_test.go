package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReloadLatency serves PaddleOCR cls (build/models, make models)
// to 4 clients and compares the latency of requests that arrive in steady
// state with that of requests that arrive while a reload (POST .../load)
// loads and warms the new model beside the old one. Each iteration is one
// steady phase and one phase of reloads; RELOAD_BENCH_TABLE names a file
// to write the markdown table of the last iteration to
// (build/bench-reload.sh puts it in BENCHMARKS.md).
func BenchmarkReloadLatency(b *testing.B) {
	src := filepath.Join(repoRoot, "build", "models", "paddleocr-cls", "model.onnx")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatalf("%v: run 'make models'", err)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "cls.onnx")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	url, stop := benchServer(b, file)
	defer stop()
	body := clsBody()
	const clients, reloads = 4, 10
	var table string
	for b.Loop() {
		steady := runLoad(b, url, body, clients, 400, nil)
		var during []time.Duration
		var took []time.Duration
		done := make(chan struct{})
		var mu sync.Mutex
		var windows [][2]time.Time
		go func() {
			defer close(done)
			for range reloads {
				t0 := time.Now()
				resp, err := http.Post(url+"/v2/repository/models/cls/load", "", nil)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("load: %v %v", err, resp)
					return
				}
				resp.Body.Close()
				t1 := time.Now()
				mu.Lock()
				windows = append(windows, [2]time.Time{t0, t1})
				mu.Unlock()
				took = append(took, t1.Sub(t0))
			}
		}()
		all := runLoad(b, url, body, clients, 0, done)
		for _, r := range all {
			for _, w := range windows {
				if !r.start.Before(w[0]) && r.start.Before(w[1]) {
					during = append(during, r.d)
					break
				}
			}
		}
		table = reloadTable(durations(steady), during, took)
	}
	b.Log("\n" + table)
	if out := os.Getenv("RELOAD_BENCH_TABLE"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// clsBody is a /predict body for PaddleOCR cls: x of shape [1,3,48,192].
func clsBody() string {
	row := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 192), ",") + "]"
	plane := "[" + strings.TrimSuffix(strings.Repeat(row+",", 48), ",") + "]"
	return `{"x": [[` + strings.TrimSuffix(strings.Repeat(plane+",", 3), ",") + `]]}`
}

type timed struct {
	start time.Time
	d     time.Duration
}

// runLoad sends body from clients clients: n requests each, or until done
// is closed when n is 0.
func runLoad(b *testing.B, url, body string, clients, n int, done <-chan struct{}) []timed {
	var mu sync.Mutex
	var out []timed
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{}
			for i := 0; n == 0 || i < n; i++ {
				if done != nil {
					select {
					case <-done:
						return
					default:
					}
				}
				t0 := time.Now()
				resp, err := c.Post(url+"/predict", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("predict: %d", resp.StatusCode)
					return
				}
				mu.Lock()
				out = append(out, timed{t0, d})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

func durations(ts []timed) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.d
	}
	return out
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func reloadTable(steady, during, took []time.Duration) string {
	var b strings.Builder
	b.WriteString("| requests | count | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		ds   []time.Duration
	}{{"steady state", steady}, {"arriving during a reload", during}} {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", r.name, len(r.ds), ms(quantile(r.ds, .5)), ms(quantile(r.ds, .9)), ms(quantile(r.ds, .99)), ms(quantile(r.ds, 1)))
	}
	fmt.Fprintf(&b, "\nA reload (POST .../load until its answer): %d reloads, p50 %s ms, max %s ms.\n", len(took), ms(quantile(took, .5)), ms(quantile(took, 1)))
	return b.String()
}

// benchServer starts svc serve on file and returns its URL.
func benchServer(b *testing.B, file string) (string, func()) {
	cmd := exec.Command(svcBin, "serve", file, "--host", "127.0.0.1", "--port", "0")
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+ortLib, "SVC_LOG_FORMAT=json")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return m[1], stop
		}
	}
	stop()
	b.Fatal("svc exited before its banner")
	return "", nil
}
