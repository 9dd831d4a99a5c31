package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/cmd/internal/bench"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args    []string
		err     string // substring; "" = valid
		batches []int64
		shape   []int64
	}{
		{args: []string{"-model", "m.onnx", "-shape", "x=1,3,48,192"}, batches: []int64{1, 8}, shape: []int64{1, 3, 48, 192}},
		{args: []string{"-model", "m.onnx", "-shape", "x=1,3", "-batch", "32,1,8", "-reps", "5", "-duration", "1s"}, batches: []int64{32, 1, 8}, shape: []int64{1, 3}},
		{args: []string{"-shape", "x=1,3"}, err: "-model"},
		{args: []string{"-model", "m.onnx"}, err: "--shape"},
		{args: []string{"-model", "m.onnx", "-shape", "x="}, err: "at least one dimension"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-batch", "1,0"}, err: "between 1 and 1024"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-batch", "8,8"}, err: "8 given twice"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-batch", "a"}, err: "comma-separated"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-reps", "0"}, err: "-reps 0"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-duration", "2m"}, err: "-duration 2m0s"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-warmup", "-1s"}, err: "-warmup"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "extra"}, err: "unexpected arguments: extra"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1,3", "-sessions", "2", "-threads", "1"}, batches: []int64{1, 8}, shape: []int64{1, 3}},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-sessions", "-1"}, err: "-sessions -1"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-sessions", "65"}, err: "between 0 and 64"},
		{args: []string{"-model", "m.onnx", "-shape", "x=1", "-sessions", "2", "-threads", "0"}, err: "-threads 0"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseArgs(tt.args, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equal(o.batches, tt.batches) || !equal(o.shape, tt.shape) || o.input != "x" {
				t.Fatalf("options = %+v", o)
			}
		})
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRotateAndWithBatch(t *testing.T) {
	s := []int64{1, 8, 32}
	for k, want := range [][]int64{{1, 8, 32}, {8, 32, 1}, {32, 1, 8}, {1, 8, 32}} {
		if got := rotate(s, k); !equal(got, want) {
			t.Errorf("rotate(%v, %d) = %v, want %v", s, k, got, want)
		}
	}
	if !equal(s, []int64{1, 8, 32}) {
		t.Errorf("rotate changed its argument: %v", s)
	}
	shape := []int64{1, 3, 48, 192}
	if got := withBatch(shape, 8); !equal(got, []int64{8, 3, 48, 192}) || shape[0] != 1 {
		t.Errorf("withBatch = %v (argument %v)", got, shape)
	}
}

// TestRunTinyModel runs the real ONNX Runtime on the committed test model.
func TestRunTinyModel(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	lib := onnxrttest.LibraryPath(t)
	out := filepath.Join(t.TempDir(), "raw.json")
	var progress bytes.Buffer
	err = run(context.Background(), []string{
		"-model", filepath.Join(root, "testdata", "models", "classifier.onnx"), "-lib", lib,
		"-shape", "input=1,4", "-batch", "1,4", "-reps", "2", "-duration", "100ms", "-warmup", "0s", "-out", out,
	}, io.Discard, &progress)
	if err != nil {
		t.Fatal(err)
	}
	res := readResult(t, out)
	if len(res.Runs) != 4 || res.Input != "input" || !equal(res.Shape, []int64{1, 4}) || res.DurationS != 0.1 {
		t.Fatalf("result = %+v", res)
	}
	// Repetition 1 starts with batch 1, repetition 2 with batch 4.
	for i, want := range []struct {
		rep   int
		batch int64
	}{{1, 1}, {1, 4}, {2, 4}, {2, 1}} {
		r := res.Runs[i]
		if r.Rep != want.rep || r.Batch != want.batch {
			t.Errorf("run %d: rep %d batch %d, want rep %d batch %d", i, r.Rep, r.Batch, want.rep, want.batch)
		}
		if r.Level.Requests == 0 || r.Level.Errors != 0 || r.Level.ThroughputRPS <= 0 ||
			r.RowsPerS != float64(r.Batch)*r.Level.ThroughputRPS || r.Level.ElapsedS < 0.1 || r.Level.ElapsedS > float64(10*time.Second/time.Second) {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	if !strings.Contains(progress.String(), "rawbatch: rep 2 batch 1:") {
		t.Errorf("progress = %q", progress.String())
	}
}

// TestRunSessionsAndBodies runs the N-sessions mode and writes the bodies
// on the real ONNX Runtime: every body is a valid /predict body, the same
// as svc bench sends (seed 1), and each repetition measures the sessions
// run beside the batch sizes.
func TestRunSessionsAndBodies(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "raw.json")
	bodies := filepath.Join(dir, "bodies")
	err = run(context.Background(), []string{
		"-model", filepath.Join(root, "testdata", "models", "classifier.onnx"), "-lib", onnxrttest.LibraryPath(t),
		"-shape", "input=1,4", "-batch", "8", "-sessions", "2", "-threads", "1", "-reps", "2",
		"-duration", "100ms", "-warmup", "0s", "-bodies", bodies, "-out", out,
	}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res := readResult(t, out)
	want := []struct {
		rep      int
		batch    int64
		sessions int
	}{{1, 8, 0}, {1, 1, 2}, {2, 1, 2}, {2, 8, 0}}
	if len(res.Runs) != len(want) {
		t.Fatalf("%d runs, want %d: %+v", len(res.Runs), len(want), res.Runs)
	}
	for i, w := range want {
		r := res.Runs[i]
		if r.Rep != w.rep || r.Batch != w.batch || r.Sessions != w.sessions {
			t.Errorf("run %d: rep %d batch %d sessions %d, want %+v", i, r.Rep, r.Batch, r.Sessions, w)
		}
		wantThreads, wantConc := 0, 1
		if w.sessions > 0 {
			wantThreads, wantConc = 1, w.sessions
		}
		if r.Threads != wantThreads || r.Level.Concurrency != wantConc || r.Level.Errors != 0 || r.RowsPerS <= 0 {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	if len(res.Bodies) != bench.DefaultBodies {
		t.Fatalf("bodies = %v", res.Bodies)
	}
	plan, err := bench.PlanInputs([]bench.Input{{Name: "input", Type: "float32", Shape: []int64{-1, 4}, Required: true}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range bench.Generate(plan, bench.DefaultBodies, 1) {
		got, err := os.ReadFile(filepath.Join(bodies, strconv.Itoa(i+1)+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, body) {
			t.Errorf("body %d = %s, want svc bench's %s", i+1, got, body)
		}
	}
}

// readResult reads the JSON document rawbatch wrote to path.
func readResult(t *testing.T, path string) Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
