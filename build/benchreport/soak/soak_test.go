package soak

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParentOf(t *testing.T) {
	tests := []struct {
		stat string
		ppid int
		ok   bool
	}{
		{"1234 (svc) S 42 1234 1234 0 -1", 42, true},
		{"1234 (a (b) c) R 7 1 1", 7, true},
		{"1234 (x y) S", 0, false},
		{"garbage", 0, false},
	}
	for _, tt := range tests {
		ppid, ok := parentOf([]byte(tt.stat))
		if ppid != tt.ppid || ok != tt.ok {
			t.Errorf("parentOf(%q) = %d, %v; want %d, %v", tt.stat, ppid, ok, tt.ppid, tt.ok)
		}
	}
}

// TestProcFS reads this process and a child it starts from the real /proc.
func TestProcFS(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := procFS{root: "/proc"}
	kids, err := p.children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range kids {
		found = found || k == cmd.Process.Pid
	}
	if !found {
		t.Errorf("children(%d) = %v, want %d among them", os.Getpid(), kids, cmd.Process.Pid)
	}
	rss, err := p.rss(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("rss = %d, %v", rss, err)
	}
	before, err := p.fds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := p.fds(os.Getpid())
	f.Close()
	if after != before+1 {
		t.Errorf("fds: %d, then %d with one more file open", before, after)
	}
	if _, err := p.rss(1 << 30); err == nil {
		t.Error("rss of a pid that does not exist: no error")
	}
}

func TestMetricValue(t *testing.T) {
	expo := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines_extra 99
go_goroutines{worker="2"} 17
go_threads 9
`
	if v, ok := metricValue([]byte(expo), "go_goroutines"); !ok || v != 17 {
		t.Errorf("go_goroutines = %v, %v; want 17", v, ok)
	}
	if v, ok := metricValue([]byte("go_goroutines 5\n"), "go_goroutines"); !ok || v != 5 {
		t.Errorf("unlabelled: %v, %v", v, ok)
	}
	if _, ok := metricValue([]byte("go_threads 9\n"), "go_goroutines"); ok {
		t.Error("found a metric that is not there")
	}
}

func TestGoroutinesByWorker(t *testing.T) {
	tests := []struct {
		name, expo, answered string
		want                 map[string]float64
	}{
		{"one worker's registry", "go_goroutines{worker=\"2\"} 17\n", "2", map[string]float64{"2": 17}},
		{"merged registries", "go_goroutines{worker=\"1\"} 12\ngo_goroutines{model=\"m\",worker=\"2\"} 14\ngo_threads 3\n", "1", map[string]float64{"1": 12, "2": 14}},
		{"no worker label", "go_goroutines 9\n", "1", map[string]float64{"1": 9}},
		{"none", "go_threads 9\n", "1", map[string]float64{}},
	}
	for _, tt := range tests {
		got := goroutinesByWorker([]byte(tt.expo), tt.answered)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			}
		}
	}
}

// goodServer is a server's result that passes every check: its spoilers
// break one each.
func goodServer() *ServerResult {
	s := &ServerResult{Name: "m", Workers: 2, RSSBound: 1 << 30,
		GoroutinesBefore: map[string]float64{"1": 10, "2": 11}, GoroutinesAfter: map[string]float64{"1": 12, "2": 9},
		FDsBefore: 40, FDsAfter: 41, PIDsBefore: []int{5, 6}, PIDsAfter: []int{5, 6},
		HWM: map[int]int64{4: 30 << 20, 5: 200 << 20, 6: 210 << 20}, WorkerPIDs: map[int]bool{5: true, 6: true}}
	for i := range 20 {
		s.RSS = append(s.RSS, Sample{At: time.Duration(i) * time.Second, Bytes: 100<<20 + int64(i)<<18}) // +5 MiB over the run
	}
	valid := &request{name: "v1", valid: true}
	attack := &request{name: "2,000 GIFs"}
	deadline := &request{name: "X-Request-Timeout", deadline: true}
	for range 5 {
		s.record(valid, answer{label: "200", class: classOK}, time.Millisecond)
		s.record(attack, answer{label: "413", class: classRefused}, time.Millisecond)
	}
	s.record(attack, answer{label: "503 busy", class: classBusy}, time.Millisecond)
	s.record(attack, answer{label: "no answer", class: classClosed}, time.Millisecond)
	s.record(deadline, answer{label: "504", class: classDeadline}, 2*time.Second)
	s.record(idleStreams, answer{label: "closed 1008", class: classClosed}, 0)
	return s
}

func TestChecks(t *testing.T) {
	valid := &request{name: "v1", valid: true}
	attack := &request{name: "2,000 GIFs"}
	tests := []struct {
		name  string
		spoil func(*ServerResult)
		want  string // the failed check, "" = all pass
	}{
		{"all good", func(*ServerResult) {}, ""},
		{"a 503 busy on a valid request", func(s *ServerResult) { s.record(valid, answer{label: "503 busy", class: classBusy}, 0) }, "no 5xx on valid requests (1 of 6 (503 busy: 1))"},
		{"no answer", func(s *ServerResult) { s.record(valid, answer{label: "no answer", class: classClosed}, 0) }, "valid requests answered 200"},
		{"a wrong body", func(s *ServerResult) { s.record(valid, answer{label: "200", class: classWrong}, 0) }, "valid requests answered 200"},
		{"a 500 on an attack", func(s *ServerResult) { s.record(attack, answer{label: "500", class: classServerErr}, 0) }, "never a 500 (1 of 10 otherwise (5xx: 1)"},
		{"an attack served", func(s *ServerResult) { s.record(attack, answer{label: "200", class: classOK}, 0) }, "never a 500"},
		{"a 504 without a deadline", func(s *ServerResult) { s.record(attack, answer{label: "504", class: classDeadline}, 0) }, "never a 500"},
		{"peak RSS over the bound", func(s *ServerResult) { s.HWM[6] = 800 << 20 }, "peak RSS under 1024.0 MiB (supervisor + workers: the sum of each process's VmHWM) (1030.0 MiB"},
		{"a worker restarted", func(s *ServerResult) { s.WorkerPIDs[7] = true }, "the same worker processes"},
		{"the server stopped", func(s *ServerResult) { s.Exited = "exited: signal: killed" }, "the server ran throughout (exited: signal: killed)"},
		{"RSS up 15 %", func(s *ServerResult) {
			for i := len(s.RSS) - 6; i < len(s.RSS); i++ {
				s.RSS[i].Bytes = 118 << 20
			}
		}, "RSS flat"},
		{"one sample at twice the others", func(s *ServerResult) { s.RSS[17].Bytes = 220 << 20 }, ""},
		{"goroutines up 3 in one worker, down 2 in the other", func(s *ServerResult) { s.GoroutinesAfter["1"], s.GoroutinesAfter["2"] = 10, 14 }, ""},
		{"goroutines up 5", func(s *ServerResult) { s.GoroutinesAfter["2"] = 14 }, "no goroutine growth"},
		{"a worker missing", func(s *ServerResult) { delete(s.GoroutinesAfter, "2") }, "no goroutine growth"},
		{"fds up 3", func(s *ServerResult) { s.FDsAfter = 43 }, "no file-descriptor growth"},
		{"the pool that forwards sequence steps grew", func(s *ServerResult) {
			s.UnixBefore, s.UnixAfter, s.FDsAfter, s.GoroutinesAfter["2"] = 34, 40, 46, 25
		}, ""},
		{"goroutines up past what the pool allows", func(s *ServerResult) {
			s.UnixBefore, s.UnixAfter, s.FDsAfter, s.GoroutinesAfter["2"] = 34, 35, 41, 16
		}, "no goroutine growth"},
		{"unix sockets past the pool's bound", func(s *ServerResult) {
			s.UnixBefore, s.UnixAfter, s.FDsAfter = 34, 300, 306
		}, "no file-descriptor growth"},
		{"a worker replaced", func(s *ServerResult) { s.PIDsAfter = []int{5, 7} }, "the same worker processes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goodServer()
			tt.spoil(s)
			r := &Result{Servers: []*ServerResult{s}, Options: Options{Workers: 2, RSSBound: 1 << 30}}
			f := r.Failures()
			switch {
			case tt.want == "" && len(f) > 0:
				t.Fatalf("failures %v", f)
			case tt.want != "" && (len(f) != 1 || !strings.Contains(f[0], tt.want)):
				t.Fatalf("failures %v, want one about %q", f, tt.want)
			}
			md := r.Markdown()
			if !strings.Contains(md, "| no 5xx on valid requests |") || strings.Contains(md, "**missed**") != (tt.want != "") {
				t.Errorf("markdown:\n%s", md)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	s := goodServer()
	s.Budget = map[string]float64{
		`svc_request_memory_peak_bytes{worker="1"}`:                       3 << 20,
		`svc_request_memory_refused_total{reason="too_large",worker="1"}`: 7,
		`svc_request_memory_limit_bytes{worker="1"}`:                      256 << 20,
	}
	s.Command = "svc serve examples/text-embed --workers 2 --grpc-port PORT"
	md := (&Result{Servers: []*ServerResult{s}, Options: Options{Workers: 2, RSSBound: 1 << 30}}).Markdown()
	for _, want := range []string{
		"### m: `svc serve examples/text-embed --workers 2 --grpc-port PORT`",
		"| 2,000 GIFs | attack | 7 | 413 × 5, 503 busy × 1, no answer × 1 | 1ms | 1ms | all |",
		"| X-Request-Timeout | attack | 1 | 504 × 1 | 2s | 2s | all |",
		"| `svc_request_memory_peak_bytes{worker=\"1\"}` | 3.0 MiB |",
		"| `svc_request_memory_refused_total{reason=\"too_large\",worker=\"1\"}` | 7 |",
		"| peak RSS under 1024.0 MiB (supervisor + workers: the sum of each process's VmHWM) | 440.0 MiB",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "limit_bytes") {
		t.Errorf("the limit is shown:\n%s", md)
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		status    string
		rss, peak int64
		ok        bool
	}{
		{"Name:\tsvc\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t9\n", 100 << 20, 200 << 20, true},
		{"VmRSS:\t 1 kB\n", 0, 0, false},
		{"VmRSS:\t 1 MB\nVmHWM:\t 2 kB\n", 0, 0, false},
	}
	for _, tt := range tests {
		rss, peak, err := parseMemory([]byte(tt.status))
		if rss != tt.rss || peak != tt.peak || (err == nil) != tt.ok {
			t.Errorf("parseMemory(%q) = %d, %d, %v", tt.status, rss, peak, err)
		}
	}
	// The real thing: this process.
	rss, peak, err := procFS{root: "/proc"}.memory(os.Getpid())
	if err != nil || rss < 1<<20 || peak < rss {
		t.Errorf("memory of this process: %d, %d, %v", rss, peak, err)
	}
}

// TestRSSCap: a server whose RSS passes the cap is stopped, and reported
// as such. The cap is a byte, which any process is over once it exists
// (its stack at least): a cap of a MiB made the test depend on how far
// sleep had got into loading itself when it was read, and on a loaded
// machine it was read at 16 KiB and not stopped.
func TestRSSCap(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), res: &ServerResult{HWM: map[int]int64{}, WorkerPIDs: map[int]bool{}}}
	go func() { p.exited(fmt.Sprint(cmd.Wait())) }()
	w := &watch{o: Options{RSSCap: 1}, proc: procFS{root: "/proc"}, procs: []*process{p}}
	w.read(p, true)
	<-p.done
	if !strings.HasPrefix(p.res.Exited, "stopped by the soak: its RSS reached") || p.res.peak() <= 0 || len(p.res.RSS) != 1 {
		t.Errorf("exited %q, peak %d, samples %d", p.res.Exited, p.res.peak(), len(p.res.RSS))
	}
}

func TestSeries(t *testing.T) {
	expo := "# HELP svc_request_memory_peak_bytes x\nsvc_request_memory_peak_bytes{worker=\"1\"} 952267\n" +
		"svc_request_memory_refused_total{reason=\"busy\",worker=\"2\"} 3\nsvc_request_memory_bytes 0\ngo_threads 9\n"
	got := series([]byte(expo), "svc_request_memory_")
	want := map[string]float64{`svc_request_memory_peak_bytes{worker="1"}`: 952267, `svc_request_memory_refused_total{reason="busy",worker="2"}`: 3, "svc_request_memory_bytes": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}

// TestGood: which answers each kind of request may get.
func TestGood(t *testing.T) {
	valid := &request{valid: true}
	attack := &request{}
	deadline := &request{deadline: true}
	leaves := &request{leave: time.Second}
	tests := []struct {
		r    *request
		c    class
		want bool
	}{
		{valid, classOK, true}, {valid, classWrong, false}, {valid, classBusy, false}, {valid, classClosed, false},
		{attack, classRefused, true}, {attack, classBusy, true}, {attack, classClosed, true}, {attack, classHeld, true},
		{attack, classOK, false}, {attack, classServerErr, false}, {attack, classDeadline, false}, {attack, classLeft, false},
		{deadline, classDeadline, true}, {deadline, classServerErr, false}, {leaves, classLeft, true}, {leaves, classDeadline, true},
	}
	for _, tt := range tests {
		if got := tt.r.good(answer{class: tt.c}); got != tt.want {
			t.Errorf("%+v: good(%s) = %v", tt.r, tt.c, got)
		}
	}
	h := http.Header{}
	if a := httpAnswer(attack, 503, h, nil); a.class != classServerErr {
		t.Errorf("503 without Retry-After: %s", a.class)
	}
	h.Set("Retry-After", "1")
	if a := httpAnswer(attack, 503, h, nil); a.class != classBusy || a.label != "503 busy" {
		t.Errorf("503 with Retry-After: %+v", a)
	}
	if a := httpAnswer(&request{valid: true, want: "x"}, 200, h, []byte("y")); a.class != classWrong {
		t.Errorf("a wrong body: %+v", a)
	}
	if a := grpcAnswer(8, "too many", nil); a.class != classRefused || a.label != "gRPC RESOURCE_EXHAUSTED" {
		t.Errorf("gRPC 8: %+v", a)
	}
	if a := grpcAnswer(13, "boom", nil); a.class != classServerErr {
		t.Errorf("gRPC INTERNAL: %+v", a)
	}
}
