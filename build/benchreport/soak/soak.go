// Package soak loads svc servers with --workers under mixed valid and bad
// traffic, and the attacks of the bounds review, for a long time and
// checks that they hold up: every server alive with its first workers,
// its peak RSS under a bound, every valid request answered 200 with the
// right body, every attack refused (4xx, 503 busy, a close; never a
// 500), the workers' memory flat after warm-up, no goroutine or file
// descriptor growth. TestSoak, built with the tag soak, runs it (make
// soak); the package's other tests check its parts quickly.
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
	"net"
	"net/http"
	"os"
	"os/exec"
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
	Svc string
	// Root is the repository: the servers' models and pictures.
	Root string
	// Servers are names of servers (see servers).
	Servers     []string
	Duration    time.Duration
	Concurrency int
	Workers     int
	Interval    time.Duration
	// MaxBody is limits.max_body_size of the servers that take the
	// soak's limits (a gzip bomb makes each worker hold a buffer this
	// large for a moment); the others keep svc's defaults.
	MaxBody string
	// WSIdle and WSHalf are the pools of idle and of half-sent WebSocket
	// connections held open against each stateful server.
	WSIdle, WSHalf int
	// RSSBound is the most a server (its supervisor and workers together)
	// may reach at its peak; past RSSCap the soak stops it, to keep the
	// machine (0: twice RSSBound).
	RSSBound, RSSCap int64
	// Log receives progress lines.
	Log io.Writer
}

// Thresholds of the checks.
const (
	maxRSSGrowth   = 0.10 // worker RSS at the end over after warm-up
	goroutineSlack = 2    // per worker, quiescent before and after
	fdSlack        = 2    // supervisor and workers, quiescent
	quiesce        = 2 * time.Second
	// seqPool is the most idle connections a worker keeps to each other
	// worker to forward sequence steps (core/workers/seqroute's
	// MaxIdleConnsPerHost).
	seqPool = 64
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
	Name    string
	Command string // svc serve's arguments
	URL     string
	Workers int
	// RSSBound is the bound of its peak RSS.
	RSSBound int64
	kinds    tally
	Examples []string
	exMu     sync.Mutex
	// RSS are the workers' summed VmRSS, sampled after warm-up.
	RSS []Sample
	// SampledPeak is the largest sum of VmRSS of the supervisor and its
	// workers sampled over the whole run; HWM is each process's VmHWM
	// (its peak RSS), last read, by pid.
	SampledPeak int64
	HWM         map[int]int64
	// Exited says why the server ended before the soak did ("" while it
	// ran throughout).
	Exited string
	// WorkerPIDs are every worker pid seen over the run.
	WorkerPIDs          map[int]bool
	GoroutinesBefore    map[string]float64
	GoroutinesAfter     map[string]float64
	FDsBefore, FDsAfter int
	// UnixBefore and UnixAfter are the workers' unix sockets among those
	// fds: under --workers, the steps of a sequence that another worker
	// holds go to it over a unix socket, and the connections stay open
	// for the next steps (a pool that grows with the steps forwarded at
	// once, to at most seqPool a peer).
	UnixBefore, UnixAfter int
	PIDsBefore, PIDsAfter []int
	// Budget are the svc_request_memory_* series at the end, by series
	// (name and labels).
	Budget       map[string]float64
	MainRequests int64
	MainSeconds  float64
}

// Sample is one RSS reading.
type Sample struct {
	At    time.Duration
	Bytes int64
}

// kindStats are the answers to one kind of request.
type kindStats struct {
	Name       string
	Valid      bool
	Count      int64
	Unexpected int64
	Answers    map[string]int64
	Classes    map[class]int64
	// Time is the time of all its answers together; Slowest, the longest.
	Time, Slowest time.Duration
}

// tally counts the answers by kind, in the order the kinds first came.
type tally struct {
	mu    sync.Mutex
	kinds map[string]*kindStats
	order []string
}

// kind returns the stats of a kind, new ones last (t.mu held).
func (t *tally) kind(name string, valid bool) *kindStats {
	if t.kinds == nil {
		t.kinds = map[string]*kindStats{}
	}
	k := t.kinds[name]
	if k == nil {
		k = &kindStats{Name: name, Valid: valid, Answers: map[string]int64{}, Classes: map[class]int64{}}
		t.kinds[name] = k
		t.order = append(t.order, name)
	}
	return k
}

// register lists the kinds of requests in the order given, before any
// answer, so that the report lists them in that order, those never sent
// too.
func (t *tally) register(reqs ...*request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range reqs {
		t.kind(r.name, r.valid)
	}
}

func (t *tally) add(name string, valid, good bool, a answer, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.kind(name, valid)
	k.Count++
	k.Time += took
	k.Answers[a.label]++
	k.Classes[a.class]++
	if !good {
		k.Unexpected++
	}
	k.Slowest = max(k.Slowest, took)
}

// snapshot copies the counts, in order.
func (t *tally) snapshot() []kindStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]kindStats, 0, len(t.order))
	for _, n := range t.order {
		k := *t.kinds[n]
		k.Answers, k.Classes = copyMap(k.Answers), copyMap(k.Classes)
		out = append(out, k)
	}
	return out
}

func copyMap[K comparable](m map[K]int64) map[K]int64 {
	out := make(map[K]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// totals sums the kinds that are valid (or not): requests, those answered
// as expected, and the answers by class.
func (s *ServerResult) totals(valid bool) (n, unexpected int64, classes map[class]int64) {
	classes = map[class]int64{}
	for _, k := range s.kinds.snapshot() {
		if k.Valid != valid {
			continue
		}
		n += k.Count
		unexpected += k.Unexpected
		for c, v := range k.Classes {
			classes[c] += v
		}
	}
	return n, unexpected, classes
}

// record counts one answer to a request of kind k.
func (s *ServerResult) record(k *request, a answer, took time.Duration) {
	good := k.good(a)
	s.kinds.add(k.name, k.valid, good, a, took)
	if !good {
		s.example(fmt.Sprintf("%s: %s: %s", k.name, a.label, a.note))
	}
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
	if len(o.Servers) == 0 {
		return nil, errors.New("no servers")
	}
	if o.Concurrency < 1 || o.Workers < 1 || o.Interval <= 0 || o.Duration <= 0 || o.RSSBound <= 0 {
		return nil, errors.New("concurrency, workers, interval, duration and the RSS bound must be positive")
	}
	if o.RSSCap <= 0 {
		o.RSSCap = 2 * o.RSSBound
	}
	res := &Result{Options: o, Start: time.Now().UTC(), CPUs: runtime.NumCPU(), Commit: commit(o.Root)}
	res.Warmup = min(max(o.Duration/5, 3*time.Second), time.Minute)
	res.LoadAvg[0] = loadAvg()
	proc := procFS{root: "/proc"}
	var procs []*process
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for _, name := range o.Servers {
		spec, ok := servers[name]
		if !ok {
			return nil, fmt.Errorf("no server %q (the soak knows %s)", name, serverNames())
		}
		mix, err := spec.mix(o.Root, spec.model)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p, err := startServer(ctx, o, spec)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		p.mix, p.log = mix, o.Log
		p.res = &ServerResult{Name: name, Command: p.command(o), URL: p.url, Workers: o.Workers, RSSBound: o.RSSBound,
			HWM: map[int]int64{}, WorkerPIDs: map[int]bool{}}
		p.res.kinds.register(mix.reqs...)
		if spec.stream {
			p.res.kinds.register(idleStreams, halfStreams)
		}
		res.Servers = append(res.Servers, p.res)
		logf(o.Log, "serving %s at %s (supervisor pid %d)", name, p.url, p.cmd.Process.Pid)
	}
	w := &watch{o: o, proc: proc, procs: procs, start: time.Now()}

	// Warm-up, then the quiescent "before" readings.
	logf(o.Log, "warm-up for %s", res.Warmup)
	if err := traffic(ctx, o, procs, res.Warmup, w.run(false)); err != nil {
		return nil, err
	}
	for _, p := range procs {
		if err := p.quiescent(ctx, proc, o.Workers, true); err != nil {
			return nil, err
		}
	}
	main := o.Duration - res.Warmup
	logf(o.Log, "soak for %s at concurrency %d per server", main, o.Concurrency)
	start := time.Now()
	before := make([]int64, len(procs))
	for i, p := range procs {
		before[i] = p.res.requests()
	}
	w.start = start
	if err := traffic(ctx, o, procs, main, w.run(true)); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	for i, p := range procs {
		p.res.MainRequests = p.res.requests() - before[i]
		p.res.MainSeconds = elapsed.Seconds()
		if err := p.quiescent(ctx, proc, o.Workers, false); err != nil {
			return nil, err
		}
		w.read(p, false)
		p.res.Budget = p.budget(ctx)
	}
	res.Elapsed = time.Since(res.Start)
	res.LoadAvg[1] = loadAvg()
	return res, nil
}

// requests counts the answers so far.
func (s *ServerResult) requests() int64 {
	n, _, _ := s.totals(true)
	m, _, _ := s.totals(false)
	return n + m
}

// watch samples the servers' memory as the traffic runs.
type watch struct {
	o     Options
	proc  procFS
	procs []*process
	// start is when the phase began (the warm-up's, then the soak's).
	start time.Time
}

// run returns the sampler of a phase: it reads every server's memory each
// interval (keeping the workers' RSS when main) until stop.
func (w *watch) run(main bool) func(stop <-chan struct{}) {
	return func(stop <-chan struct{}) {
		t := time.NewTicker(w.o.Interval)
		defer t.Stop()
		for {
			var parts []string
			for _, p := range w.procs {
				workers, total := w.read(p, main)
				parts = append(parts, fmt.Sprintf("%s: %d requests, RSS %s (workers %s)", p.res.Name, p.res.requests(), mib(total), mib(workers)))
			}
			phase := "warm-up"
			if main {
				phase = "soak"
			}
			logf(w.o.Log, "%s %6s  %s", phase, time.Since(w.start).Truncate(time.Second), strings.Join(parts, "; "))
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}
}

// read takes one reading of a server's memory: each process's VmRSS and
// VmHWM. It stops a server whose RSS passes the cap.
func (w *watch) read(p *process, main bool) (workers, total int64) {
	if !p.alive() {
		return 0, 0
	}
	sup := p.cmd.Process.Pid
	pids, _ := w.proc.children(sup)
	for _, pid := range append([]int{sup}, pids...) {
		rss, hwm, err := w.proc.memory(pid)
		if err != nil {
			continue // gone meanwhile
		}
		total += rss
		if pid != sup {
			workers += rss
		}
		p.res.record2(pid, pid != sup, hwm)
	}
	p.res.SampledPeak = max(p.res.SampledPeak, total)
	if main {
		p.res.RSS = append(p.res.RSS, Sample{At: time.Since(w.start), Bytes: workers})
	}
	if total > w.o.RSSCap {
		p.kill(fmt.Sprintf("stopped by the soak: its RSS reached %s, past %s", mib(total), mib(w.o.RSSCap)))
	}
	return workers, total
}

// record2 keeps a process's VmHWM (and a worker's pid).
func (s *ServerResult) record2(pid int, worker bool, hwm int64) {
	s.exMu.Lock()
	defer s.exMu.Unlock()
	s.HWM[pid] = max(s.HWM[pid], hwm)
	if worker {
		s.WorkerPIDs[pid] = true
	}
}

// peak is the sum of every process's VmHWM: a bound of the server's peak
// RSS, since the processes' peaks may come at different times.
func (s *ServerResult) peak() int64 {
	s.exMu.Lock()
	defer s.exMu.Unlock()
	var sum int64
	for _, v := range s.HWM {
		sum += v
	}
	return sum
}

// traffic runs every server's mix at concurrency for d, the WebSocket
// pools of the stateful ones, and sampler until the traffic stops.
func traffic(ctx context.Context, o Options, procs []*process, d time.Duration, sampler func(stop <-chan struct{})) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range procs {
		for i := 0; i < o.Concurrency; i++ {
			wg.Go(func() { p.load(ctx, rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))) })
		}
		if p.spec.stream {
			stream := "/v2/models/" + p.spec.model + "/stream"
			wg.Go(func() { p.pool(ctx, idleStreams, stream, o.WSIdle, false) })
			wg.Go(func() { p.pool(ctx, halfStreams, stream, o.WSHalf, true) })
		}
	}
	stop := make(chan struct{})
	var sw sync.WaitGroup
	sw.Go(func() { sampler(stop) })
	wg.Wait()
	close(stop)
	sw.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// The kinds of the WebSocket pools (finding 6).
var (
	idleStreams = &request{name: "idle WebSocket streams (never a step), a pool"}
	halfStreams = &request{name: "WebSocket frames of 16 MiB announced, 1 KiB sent, a pool"}
)

// process is a running svc serve.
type process struct {
	spec     server
	args     []string
	cmd      *exec.Cmd
	url      string
	addr     string // host:port of url
	grpcAddr string
	stderr   *tail
	done     chan struct{}
	err      error
	exitOnce sync.Once
	client   *http.Client
	grpc     *http.Client
	mix      *mix
	res      *ServerResult
	ids      atomic.Uint64
	log      io.Writer
}

var urlLine = regexp.MustCompile(`(?m)^\s+URL\s+(http://\S+)`)

// freePort is a TCP port free on 127.0.0.1 now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func startServer(ctx context.Context, o Options, spec server) (*process, error) {
	args := append(append([]string{"serve"}, spec.serveArgs(o.Root)...), "--workers", strconv.Itoa(o.Workers), "--host", "127.0.0.1", "--port", "0")
	p := &process{spec: spec, stderr: &tail{max: 1 << 16}, done: make(chan struct{})}
	if spec.grpc {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--grpc-port", port)
		p.grpcAddr = "127.0.0.1:" + port
	}
	if spec.limits && o.MaxBody != "" {
		cfg, err := os.CreateTemp("", "soak-*.yml")
		if err != nil {
			return nil, err
		}
		defer os.Remove(cfg.Name()) // read at start-up, before the banner
		if _, err := fmt.Fprintf(cfg, "limits:\n  max_body_size: %s\n", o.MaxBody); err != nil {
			return nil, err
		}
		if err := cfg.Close(); err != nil {
			return nil, err
		}
		args = append(args, "-c", cfg.Name())
	}
	p.args = args
	cmd := exec.Command(o.Svc, args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "SVC_LOG_FORMAT=json")
	// A group of its own, so that the soak can end the workers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout := &tail{max: 1 << 16}
	p.cmd = cmd
	cmd.Stdout, cmd.Stderr = stdout, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Svc, err)
	}
	go func() {
		err := cmd.Wait()
		p.exited(fmt.Sprintf("exited: %v", err))
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for p.url == "" {
		if m := urlLine.FindStringSubmatch(stdout.String()); m != nil {
			p.url = m[1]
			break
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("svc %s: %s\n%s%s", strings.Join(p.args, " "), p.res0(), stdout, p.stderr)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("svc %s printed no banner in 3 minutes", strings.Join(p.args, " "))
		}
	}
	p.addr = strings.TrimPrefix(p.url, "http://")
	p.client = &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true},
	}
	p.grpc = newGRPCClient()
	return p, nil
}

// command is the server's command line as the report shows it: the
// repository's paths relative, the ports left out.
func (p *process) command(o Options) string {
	parts := append([]string{"svc", "serve"}, p.spec.args...)
	parts = append(parts, "--workers", strconv.Itoa(o.Workers))
	if p.spec.grpc {
		parts = append(parts, "--grpc-port", "PORT")
	}
	if p.spec.limits && o.MaxBody != "" {
		parts = append(parts, "-c", "soak.yml")
	}
	return strings.Join(parts, " ")
}

// exited records why the server ended (the first reason), once.
func (p *process) exited(why string) {
	p.exitOnce.Do(func() {
		p.err = errors.New(why)
		close(p.done)
	})
}

func (p *process) res0() string {
	if p.err != nil {
		return p.err.Error()
	}
	return ""
}

func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill ends the server and its workers at once (SIGKILL to its group),
// saying why.
func (p *process) kill(why string) {
	if !p.alive() {
		return
	}
	if p.res != nil && p.res.Exited == "" {
		p.res.Exited = why
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// stop ends the server: SIGTERM, then SIGKILL to its group after 30 s.
func (p *process) stop() {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// nextID is a sequence id of its own.
func (p *process) nextID() string {
	return fmt.Sprintf("soak-%d-%d", p.cmd.Process.Pid, p.ids.Add(1))
}

// load sends requests from the mix until ctx ends.
func (p *process) load(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil && p.alive() {
		k := p.mix.pick(rng)
		start := time.Now()
		var a answer
		if k.flow != nil {
			a = k.flow(ctx, p, rng)
		} else {
			a = p.sendHTTP(ctx, k, rng.IntN(10) == 0)
		}
		if ctx.Err() != nil {
			return // cut off by the end of the phase: not counted
		}
		if !p.alive() && p.res.Exited == "" {
			p.res.Exited = p.res0()
		}
		p.res.record(k, a, time.Since(start))
	}
}

// sendHTTP sends an HTTP request of kind k and judges its answer.
func (p *process) sendHTTP(ctx context.Context, k *request, closeConn bool) answer {
	rctx := ctx
	if k.leave > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, k.leave)
		defer cancel()
	}
	left := func(err error) answer {
		if k.leave > 0 && rctx.Err() != nil && ctx.Err() == nil {
			return answer{label: "client left", class: classLeft}
		}
		return noAnswer(err)
	}
	method := k.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(rctx, method, p.url+k.path, bytes.NewReader(k.body))
	if err != nil {
		return noAnswer(err)
	}
	if k.ctype != "" {
		req.Header.Set("Content-Type", k.ctype)
	}
	for i := 0; i+1 < len(k.headers); i += 2 {
		req.Header.Set(k.headers[i], k.headers[i+1])
	}
	req.Close = closeConn
	resp, err := p.client.Do(req)
	if err != nil {
		return left(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return left(err)
	}
	return httpAnswer(k, resp.StatusCode, resp.Header, b)
}

// budget scrapes the svc_request_memory_* series (every worker's, with
// its label).
func (p *process) budget(ctx context.Context) map[string]float64 {
	if !p.alive() {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/metrics", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return series(b, "svc_request_memory_")
}

// series reads the samples of an exposition whose names begin with
// prefix: series (name and labels) to value.
func series(expo []byte, prefix string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(expo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		key, rest := line, ""
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			key, rest = line[:i+1], line[i+1:]
		} else if f := strings.Fields(line); len(f) >= 2 {
			key, rest = f[0], f[1]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			out[key] = v
		}
	}
	return out
}

// quiescent takes the readings of a server at rest: idle connections
// closed, then goroutines per worker (from /metrics), open fds of the
// supervisor and the workers, and the worker pids.
func (p *process) quiescent(ctx context.Context, proc procFS, workers int, before bool) error {
	if !p.alive() {
		return nil
	}
	p.client.CloseIdleConnections()
	p.grpc.CloseIdleConnections() // its HTTP/2 connection holds goroutines in a worker
	if err := p.idle(ctx); err != nil {
		return err
	}
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
	fds, unixFDs := 0, 0
	unix := proc.unixSockets()
	var kinds []string
	for _, pid := range append([]int{p.cmd.Process.Pid}, pids...) {
		n, err := proc.fds(pid)
		if err != nil {
			return fmt.Errorf("fds of %d: %w", pid, err)
		}
		fds += n
		k := proc.fdKinds(pid, unix)
		if pid != p.cmd.Process.Pid {
			unixFDs += k["unix"]
		}
		kinds = append(kinds, fmt.Sprintf("%d: %v", pid, k))
	}
	logf(p.log, "%s at rest (after warm-up: %v): goroutines %v; fds %d (%s)", p.res.Name, before, g, fds, strings.Join(kinds, "; "))
	if before {
		p.res.GoroutinesBefore, p.res.FDsBefore, p.res.UnixBefore, p.res.PIDsBefore = g, fds, unixFDs, pids
	} else {
		p.res.GoroutinesAfter, p.res.FDsAfter, p.res.UnixAfter, p.res.PIDsAfter = g, fds, unixFDs, pids
	}
	return nil
}

// idle waits until no request is in flight in any worker
// (svc_inference_in_flight), a minute at most: requests that the soak
// left (a client that left, a deadline that passed) may still be
// decoding a picture, and hold goroutines.
func (p *process) idle(ctx context.Context) error {
	for deadline := time.Now().Add(time.Minute); ; sleep(ctx, 200*time.Millisecond) {
		if err := ctx.Err(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/metrics", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		req.Close = true
		resp, err := p.client.Do(req)
		if err != nil {
			return fmt.Errorf("scrape %s: %w", p.url, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("scrape %s: %w", p.url, err)
		}
		n := sum(series(b, "svc_inference_in_flight"), "svc_inference_in_flight")
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			logf(p.log, "%s: %v requests still in flight after a minute at rest", p.res.Name, n)
			return nil
		}
	}
}

// sum adds the samples of metric name (with any labels) among series.
func sum(series map[string]float64, name string) float64 {
	var n float64
	for k, v := range series {
		if k == name || strings.HasPrefix(k, name+"{") {
			n += v
		}
	}
	return n
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

func commit(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
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
