package core

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// soloRun feeds one solo run through the chooser, as the pool does, with
// the per-element cost cost gives for each kind, and returns the kind run.
func soloRun(c *soloChooser, cost [2]time.Duration) int {
	kind := c.Next()
	c.Observe(kind, 1, cost[kind])
	return kind
}

func TestSoloChooserPicksTheFasterSession(t *testing.T) {
	tests := []struct {
		name string
		cost [2]time.Duration // narrow, wide
		want int
	}{
		{"a large model: all cores are faster", [2]time.Duration{10 * time.Millisecond, 6 * time.Millisecond}, wideSession},
		{"a small model: one thread is faster", [2]time.Duration{700 * time.Microsecond, 800 * time.Microsecond}, narrowSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c soloChooser
			ran := [2]int{}
			for i := 0; i < 2*soloTrials+2; i++ {
				ran[soloRun(&c, tt.cost)]++
			}
			if ran[0] != soloTrials+1 || ran[1] != soloTrials+1 {
				t.Fatalf("trials ran %v, want %d of each", ran, soloTrials+1)
			}
			if c.Pick() != tt.want {
				t.Fatalf("pick %d after the trials, want %d", c.Pick(), tt.want)
			}
			// Outside trials every solo run goes to the pick, until the
			// next probe of the other kind.
			ran = [2]int{}
			for i := 0; i < soloProbeEvery-1; i++ {
				ran[soloRun(&c, tt.cost)]++
			}
			if ran[1-tt.want] != 0 {
				t.Fatalf("runs %v before the probe, want all on %d", ran, tt.want)
			}
			ran = [2]int{}
			for i := 0; i < soloTrials+1; i++ {
				ran[soloRun(&c, tt.cost)]++
			}
			if ran[1-tt.want] != soloTrials {
				t.Fatalf("probe ran %v, want %d on the other kind", ran, soloTrials)
			}
		})
	}
}

func TestSoloChooserFollowsAChange(t *testing.T) {
	var c soloChooser
	slowWide := [2]time.Duration{time.Millisecond, 2 * time.Millisecond}
	for i := 0; i < 2*soloTrials+2; i++ {
		soloRun(&c, slowWide)
	}
	if c.Pick() != narrowSession {
		t.Fatal("narrow not picked")
	}
	// The machine changed (another process left): the wide session is
	// faster now, and a probe notices.
	fastWide := [2]time.Duration{time.Millisecond, time.Millisecond / 2}
	for i := 0; i < 2*soloProbeEvery && c.Pick() != wideSession; i++ {
		soloRun(&c, fastWide)
	}
	if c.Pick() != wideSession {
		t.Fatal("wide not picked after it became faster")
	}
}

func TestSoloChooserIgnoresEmptyRuns(t *testing.T) {
	var c soloChooser
	for _, k := range []int{-1, 2} {
		if _, moved := c.Observe(k, 10, time.Millisecond); moved {
			t.Fatalf("kind %d moved the pick", k)
		}
	}
	c.Observe(wideSession, 0, time.Millisecond)
	c.Observe(wideSession, 10, 0)
	if c.samples != [2]int{} {
		t.Fatalf("samples %v after empty runs", c.samples)
	}
}

// runCounter counts a predictor's executions.
type runCounter struct {
	NopObserver
	n atomic.Int64
}

func (r *runCounter) Executed(int, time.Duration) { r.n.Add(1) }

func TestPoolRunsAloneOnBothSessions(t *testing.T) {
	wd, _ := os.Getwd()
	file := filepath.Join(filepath.Dir(wd), "testdata", "models", "classifier.onnx")
	var narrowRuns, wideRuns runCounter
	narrow, err := NewPredictor(Options{Name: "m", File: file, Runtime: config.Runtime{IntraOpThreads: 1}, Observer: &narrowRuns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := NewPredictor(Options{Name: "m", File: file, Runtime: config.Runtime{IntraOpThreads: 2}, Observer: &wideRuns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool(narrow)
	if err != nil {
		t.Fatal(err)
	}
	pool.AddWide(wide, nil)
	pool.Bound(2)
	defer func() {
		if err := pool.Close(); err != nil {
			t.Error(err)
		}
	}()
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{5.1, 3.5, 1.4, 0.2}}}
	var first []float32
	for i := 0; i < 2*soloTrials+2; i++ {
		res, err := pool.Predict(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := res.Tensor(0)
		if err != nil {
			t.Fatal(err)
		}
		got := append([]float32(nil), out.Data.([]float32)...)
		res.Close()
		if first == nil {
			first = got
		} else if len(got) != len(first) || got[0] != first[0] {
			t.Fatalf("run %d answered %v, the first %v: the sessions disagree", i, got, first)
		}
	}
	if narrowRuns.n.Load() != soloTrials+1 || wideRuns.n.Load() != soloTrials+1 {
		t.Fatalf("runs alone: %d narrow, %d wide; want %d of each", narrowRuns.n.Load(), wideRuns.n.Load(), soloTrials+1)
	}
}
