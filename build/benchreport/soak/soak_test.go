package soak

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
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

func TestChecks(t *testing.T) {
	good := func() *ServerResult {
		s := &ServerResult{Model: "m.onnx",
			GoroutinesBefore: map[string]float64{"1": 10, "2": 11}, GoroutinesAfter: map[string]float64{"1": 12, "2": 9},
			FDsBefore: 40, FDsAfter: 41, PIDsBefore: []int{5, 6}, PIDsAfter: []int{5, 6}}
		for i := range 20 {
			s.RSS = append(s.RSS, Sample{At: time.Duration(i) * time.Second, Bytes: 100<<20 + int64(i)<<18}) // +5 MiB over the run
		}
		for range 5 {
			s.Valid.add(200)
			s.Bad.add(400)
		}
		s.Bad.add(413)
		return s
	}
	tests := []struct {
		name  string
		spoil func(*ServerResult)
		want  string // the failed check, "" = all pass
	}{
		{"all good", func(*ServerResult) {}, ""},
		{"a 5xx on a valid request", func(s *ServerResult) { s.Valid.add(503) }, "no 5xx on valid requests"},
		{"no answer", func(s *ServerResult) { s.Valid.add(0) }, "valid requests answered 200"},
		{"a wrong body", func(s *ServerResult) { s.ValidWrong.Add(1) }, "valid requests answered 200"},
		{"a 500 on a bad request", func(s *ServerResult) { s.Bad.add(500) }, "bad requests answered 4xx"},
		{"RSS up 15 %", func(s *ServerResult) {
			for i := len(s.RSS) - 6; i < len(s.RSS); i++ {
				s.RSS[i].Bytes = 118 << 20
			}
		}, "RSS flat"},
		{"goroutines up 3", func(s *ServerResult) { s.GoroutinesAfter["2"] = 14 }, "no goroutine growth"},
		{"a worker missing", func(s *ServerResult) { delete(s.GoroutinesAfter, "2") }, "no goroutine growth"},
		{"fds up 3", func(s *ServerResult) { s.FDsAfter = 43 }, "no file-descriptor growth"},
		{"a worker replaced", func(s *ServerResult) { s.PIDsAfter = []int{5, 7} }, "the same worker processes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good()
			tt.spoil(s)
			r := &Result{Servers: []*ServerResult{s}}
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

func TestMixes(t *testing.T) {
	for _, m := range []string{"testdata/models/classifier.onnx", "multi_input.onnx"} {
		mx, err := mixFor(m)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		seen := map[string]bool{}
		valid := 0
		for range 20000 {
			r := mx.pick(rng)
			seen[r.name] = true
			if r.valid {
				valid++
			}
		}
		if len(seen) != len(mx.reqs) {
			t.Errorf("%s: %d of %d kinds picked", m, len(seen), len(mx.reqs))
		}
		if valid < 8000 || valid > 14000 {
			t.Errorf("%s: %d of 20000 valid, want about half", m, valid)
		}
	}
	if _, err := mixFor("other.onnx"); err == nil {
		t.Error("a mix for an unknown model")
	}
}
