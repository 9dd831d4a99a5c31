// Package soak loads svc servers with --workers under mixed valid and bad
// traffic for a long time and checks that they hold up: no 5xx on valid
// requests, the workers' memory flat after warm-up, no goroutine or file
// descriptor growth, the same workers throughout. TestSoak, built with
// the tag soak, runs it (make soak); the package's other tests check its
// parts quickly.
package soak

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options configure a soak.
type Options struct {
	Svc         string
	Models      []string
	Duration    time.Duration
	Concurrency int
	Workers     int
	Interval    time.Duration
	// MaxBody is the servers' limits.max_body_size (a gzip bomb makes
	// each worker hold a buffer this large for a moment).
	MaxBody string
	// Log receives progress lines.
	Log io.Writer
}

// Thresholds of the checks.
const (
	maxRSSGrowth   = 0.10 // worker RSS at the end over after warm-up
	goroutineSlack = 2    // per worker, quiescent before and after
	fdSlack        = 2    // supervisor and workers, quiescent
	quiesce        = 2 * time.Second
	rssWindow      = 6 // samples averaged at either end
)

// Result is the outcome of a soak.
type Result struct {
	Options Options
	Start   time.Time
	Elapsed time.Duration
	Warmup  time.Duration
	CPUs    int
	LoadAvg [2]string // /proc/loadavg before and after
	Commit  string
	Servers []*ServerResult
}

// ServerResult is what one server did.
type ServerResult struct {
	Model string
	URL   string
	// Requests by traffic kind (valid or bad) and status (0: no answer).
	Valid, Bad            statusCounts
	ValidWrong            atomic.Int64 // 200 with an unexpected body
	Examples              []string
	exMu                  sync.Mutex
	RSS                   []Sample // after warm-up, sum over the workers
	GoroutinesBefore      map[string]float64
	GoroutinesAfter       map[string]float64
	FDsBefore, FDsAfter   int
	PIDsBefore, PIDsAfter []int
	MainRequests          int64
	MainSeconds           float64
}

// Sample is one RSS reading.
type Sample struct {
	At    time.Duration
	Bytes int64
}

type statusCounts struct {
	mu sync.Mutex
	m  map[int]int64
}

func (c *statusCounts) add(status int) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[int]int64{}
	}
	c.m[status]++
	c.mu.Unlock()
}

// snapshot returns the counts by status.
func (c *statusCounts) snapshot() map[int]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]int64, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

func (c *statusCounts) total() int64 {
	var n int64
	for _, v := range c.snapshot() {
		n += v
	}
	return n
}

// count sums the statuses keep accepts.
func (c *statusCounts) count(keep func(int) bool) int64 {
	var n int64
	for k, v := range c.snapshot() {
		if keep(k) {
			n += v
		}
	}
	return n
}

func (s *ServerResult) example(msg string) {
	s.exMu.Lock()
	defer s.exMu.Unlock()
	if len(s.Examples) < 10 {
		s.Examples = append(s.Examples, msg)
	}
}

// Run starts the servers, loads them and checks them.
func Run(ctx context.Context, o Options) (*Result, error) {
	if len(o.Models) == 0 {
		return nil, errors.New("no models")
	}
	if o.Concurrency < 1 || o.Workers < 1 || o.Interval <= 0 || o.Duration <= 0 {
		return nil, errors.New("concurrency, workers, interval and duration must be positive")
	}
	res := &Result{Options: o, Start: time.Now().UTC(), CPUs: runtime.NumCPU(), Commit: commit()}
	res.Warmup = min(max(o.Duration/5, 3*time.Second), time.Minute)
	res.LoadAvg[0] = loadAvg()
	proc := procFS{root: "/proc"}
	var servers []*process
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for _, m := range o.Models {
		mix, err := mixFor(m)
		if err != nil {
			return nil, err
		}
		p, err := startServer(ctx, o.Svc, m, o.Workers, o.MaxBody)
		if err != nil {
			return nil, err
		}
		servers = append(servers, p)
		p.mix = mix
		p.res = &ServerResult{Model: filepath.Base(m), URL: p.url}
		res.Servers = append(res.Servers, p.res)
		logf(o.Log, "serving %s at %s (supervisor pid %d)", m, p.url, p.cmd.Process.Pid)
	}

	// Warm-up, then the quiescent "before" readings.
	logf(o.Log, "warm-up for %s", res.Warmup)
	if err := traffic(ctx, servers, o.Concurrency, res.Warmup, nil); err != nil {
		return nil, err
	}
	for _, p := range servers {
		if err := p.quiescent(ctx, proc, o.Workers, true); err != nil {
			return nil, err
		}
	}
	main := o.Duration - res.Warmup
	logf(o.Log, "soak for %s at concurrency %d per server", main, o.Concurrency)
	start := time.Now()
	before := make([]int64, len(servers))
	for i, p := range servers {
		before[i] = p.res.Valid.total() + p.res.Bad.total()
	}
	sample := func(at time.Duration) {
		for _, p := range servers {
			var sum int64
			pids, _ := proc.children(p.cmd.Process.Pid)
			for _, pid := range pids {
				if r, err := proc.rss(pid); err == nil {
					sum += r
				}
			}
			p.res.RSS = append(p.res.RSS, Sample{At: at, Bytes: sum})
		}
		var parts []string
		for _, p := range servers {
			parts = append(parts, fmt.Sprintf("%s: %d requests, workers' RSS %.1f MiB", p.res.Model,
				p.res.Valid.total()+p.res.Bad.total(), float64(p.res.RSS[len(p.res.RSS)-1].Bytes)/(1<<20)))
		}
		logf(o.Log, "%6s  %s", at.Truncate(time.Second), strings.Join(parts, "; "))
	}
	if err := traffic(ctx, servers, o.Concurrency, main, func(stop <-chan struct{}) {
		t := time.NewTicker(o.Interval)
		defer t.Stop()
		sample(0)
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample(time.Since(start))
			}
		}
	}); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	for i, p := range servers {
		p.res.MainRequests = p.res.Valid.total() + p.res.Bad.total() - before[i]
		p.res.MainSeconds = elapsed.Seconds()
		if err := p.quiescent(ctx, proc, o.Workers, false); err != nil {
			return nil, err
		}
	}
	res.Elapsed = time.Since(res.Start)
	res.LoadAvg[1] = loadAvg()
	return res, nil
}

// traffic runs every server's mix at concurrency for d; sampler, if set,
// runs alongside until the traffic stops.
func traffic(ctx context.Context, servers []*process, concurrency int, d time.Duration, sampler func(stop <-chan struct{})) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range servers {
		for i := 0; i < concurrency; i++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				p.load(ctx, rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano()))))
			}(uint64(i))
		}
	}
	stop := make(chan struct{})
	var sw sync.WaitGroup
	if sampler != nil {
		sw.Add(1)
		go func() { defer sw.Done(); sampler(stop) }()
	}
	wg.Wait()
	close(stop)
	sw.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	for _, p := range servers {
		select {
		case <-p.done:
			return fmt.Errorf("%s: the server exited: %v\n%s", p.res.Model, p.err, p.stderr.String())
		default:
		}
	}
	return nil
}

// process is a running svc serve.
type process struct {
	cmd    *exec.Cmd
	url    string
	stderr *tail
	done   chan struct{}
	err    error
	client *http.Client
	mix    *mix
	res    *ServerResult
}

var urlLine = regexp.MustCompile(`(?m)^\s+URL\s+(http://\S+)`)

func startServer(ctx context.Context, svc, model string, workers int, maxBody string) (*process, error) {
	args := []string{"serve", model, "--workers", strconv.Itoa(workers), "--host", "127.0.0.1", "--port", "0"}
	if maxBody != "" {
		cfg, err := os.CreateTemp("", "soak-*.yml")
		if err != nil {
			return nil, err
		}
		defer os.Remove(cfg.Name()) // read at start-up, before the banner
		if _, err := fmt.Fprintf(cfg, "limits:\n  max_body_size: %s\n", maxBody); err != nil {
			return nil, err
		}
		if err := cfg.Close(); err != nil {
			return nil, err
		}
		args = append(args, "-c", cfg.Name())
	}
	cmd := exec.Command(svc, args...)
	cmd.Env = append(os.Environ(), "SVC_LOG_FORMAT=json")
	stdout := &tail{max: 1 << 16}
	p := &process{cmd: cmd, stderr: &tail{max: 1 << 16}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = stdout, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", svc, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for p.url == "" {
		if m := urlLine.FindStringSubmatch(stdout.String()); m != nil {
			p.url = m[1]
			break
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("svc serve %s exited: %v\n%s%s", model, p.err, stdout, p.stderr)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("svc serve %s printed no banner in 3 minutes", model)
		}
	}
	p.client = &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true},
	}
	return p, nil
}

// stop ends the server: SIGTERM, then SIGKILL after 30 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// load sends requests from the mix until ctx ends.
func (p *process) load(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		rq := p.mix.pick(rng)
		status, body, err := p.send(ctx, rq, rng.IntN(10) == 0)
		if ctx.Err() != nil {
			return // cut off by the end of the phase: not counted
		}
		if err != nil {
			status = 0
			p.res.example(fmt.Sprintf("%s: %v", rq.name, err))
		}
		if rq.valid {
			p.res.Valid.add(status)
			if status == http.StatusOK && !bytes.Contains(body, []byte(rq.want)) {
				p.res.ValidWrong.Add(1)
				p.res.example(fmt.Sprintf("%s: 200 %.200s", rq.name, body))
			} else if status != http.StatusOK && err == nil {
				p.res.example(fmt.Sprintf("%s: %d %.200s", rq.name, status, body))
			}
			continue
		}
		p.res.Bad.add(status)
		if (status < 400 || status >= 500) && err == nil {
			p.res.example(fmt.Sprintf("%s: %d %.200s", rq.name, status, body))
		}
	}
}

func (p *process) send(ctx context.Context, rq *request, closeConn bool) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, rq.method, p.url+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		return 0, nil, err
	}
	if rq.ctype != "" {
		req.Header.Set("Content-Type", rq.ctype)
	}
	for i := 0; i+1 < len(rq.headers); i += 2 {
		req.Header.Set(rq.headers[i], rq.headers[i+1])
	}
	req.Close = closeConn
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// quiescent takes the readings of a server at rest: idle connections
// closed, then goroutines per worker (from /metrics), open fds of the
// supervisor and the workers, and the worker pids.
func (p *process) quiescent(ctx context.Context, proc procFS, workers int, before bool) error {
	p.client.CloseIdleConnections()
	select {
	case <-time.After(quiesce):
	case <-ctx.Done():
		return ctx.Err()
	}
	g, err := p.goroutines(ctx, workers)
	if err != nil {
		return err
	}
	pids, err := proc.children(p.cmd.Process.Pid)
	if err != nil {
		return err
	}
	sort.Ints(pids)
	fds := 0
	for _, pid := range append([]int{p.cmd.Process.Pid}, pids...) {
		n, err := proc.fds(pid)
		if err != nil {
			return fmt.Errorf("fds of %d: %w", pid, err)
		}
		fds += n
	}
	if before {
		p.res.GoroutinesBefore, p.res.FDsBefore, p.res.PIDsBefore = g, fds, pids
	} else {
		p.res.GoroutinesAfter, p.res.FDsAfter, p.res.PIDsAfter = g, fds, pids
	}
	return nil
}

// goroutines scrapes /metrics (Prometheus text) on new connections until
// every worker has answered once: go_goroutines by X-Worker-Id.
func (p *process) goroutines(ctx context.Context, workers int) (map[string]float64, error) {
	out := map[string]float64{}
	for i := 0; i < 200 && len(out) < workers; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		req.Close = true
		resp, err := p.client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", p.url, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("scrape %s: %d %v", p.url, resp.StatusCode, err)
		}
		byWorker := goroutinesByWorker(b, resp.Header.Get("X-Worker-Id"))
		if len(byWorker) == 0 {
			return nil, fmt.Errorf("scrape %s: no go_goroutines", p.url)
		}
		for id, v := range byWorker {
			if _, seen := out[id]; !seen {
				out[id] = v
			}
		}
	}
	if len(out) < workers {
		return nil, fmt.Errorf("scrape %s: only workers %v answered in 200 scrapes", p.url, keys(out))
	}
	return out, nil
}

// goroutinesByWorker reads go_goroutines from an exposition: one value
// per worker label when the samples carry one (a scrape that merges the
// workers' registries), else the one value, for the worker that answered
// (its X-Worker-Id).
func goroutinesByWorker(expo []byte, answered string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(expo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "go_goroutines{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "}")
		if !ok {
			continue
		}
		_, w, ok := strings.Cut(labels, `worker="`)
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(w, `"`)
		if f := strings.Fields(value); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				out[id] = v
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if v, ok := metricValue(expo, "go_goroutines"); ok {
		out[answered] = v
	}
	return out
}

// metricValue finds a sample of name (with or without labels) in a
// Prometheus text exposition.
func metricValue(expo []byte, name string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(expo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if rest[0] == '{' {
			i := strings.LastIndexByte(rest, '}')
			if i < 0 {
				continue
			}
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err == nil {
			return v, true
		}
	}
	return 0, false
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, time.Now().UTC().Format("15:04:05")+" "+format+"\n", args...)
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.Bytes()
}
