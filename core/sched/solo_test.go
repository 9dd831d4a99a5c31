package sched

import (
	"context"
	"testing"
	"time"
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
func TestPoolRunsAloneOnBothSessions(t *testing.T) {
	narrow, wide := newFakeSession(2), newFakeSession(2)
	pool, err := NewPool(narrow)
	if err != nil {
		t.Fatal(err)
	}
	pool.AddWide(wide, nil)
	pool.Bound(2)
	if got := pool.Concurrency(); got != 2 {
		t.Fatalf("Concurrency() = %d while exploring, want the 2 slots", got)
	}
	for i := 0; i < 2*soloTrials+2; i++ {
		res, err := pool.Predict(context.Background(), row(2, float32(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := answerOf(res, 2, float32(i)); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if len(narrow.runs()) != soloTrials+1 || len(wide.runs()) != soloTrials+1 {
		t.Fatalf("runs alone: %d narrow, %d wide; want %d of each", len(narrow.runs()), len(wide.runs()), soloTrials+1)
	}
	if err := pool.Close(); err != nil || !narrow.closed || !wide.closed {
		t.Fatalf("Close: %v; closed %v %v", err, narrow.closed, wide.closed)
	}
}

// TestPoolConcurrencyFollowsTheChooser: the session mode's gauge is 1 when
// solo runs go to the wide session, the slots otherwise.
func TestPoolConcurrencyFollowsTheChooser(t *testing.T) {
	pool, err := NewPool(newFakeSession(2))
	if err != nil {
		t.Fatal(err)
	}
	pool.Bound(2)
	if got := pool.Concurrency(); got != 2 {
		t.Fatalf("without a wide session: %d, want 2", got)
	}
	pool.AddWide(newFakeSession(2), nil)
	cost := [2]time.Duration{10 * time.Millisecond, time.Millisecond}
	for range 2 * (soloTrials + 2) {
		soloRun(&pool.solo, cost)
	}
	if got := pool.Concurrency(); got != 1 {
		t.Fatalf("solo runs on the wide session: %d, want 1", got)
	}
}
