package sched

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// TestSchedule: the sessions opened, the runner in front of them and what
// Stats reports, for each configuration.
func TestSchedule(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		failAt int
		// want: the threads each session was opened with (0: configured),
		// whether a batcher is in front, and the stats.
		threads []int
		batched bool
		stats   core.SchedStats
		err     string
	}{
		{"one session, no batching", Config{Sessions: 1, Slots: 2},
			0, []int{0}, false, core.SchedStats{Sessions: 2}, ""},
		{"in-process sessions", Config{Sessions: 3, Slots: 1},
			0, []int{0, 0, 0}, false, core.SchedStats{Sessions: 3}, ""},
		{"fixed batching", Config{Sessions: 1, Slots: 2, Batching: Batching{Enabled: true, MaxBatchSize: 16}},
			0, []int{0}, true, core.SchedStats{Sessions: 2, BatchLimit: 16}, ""},
		{"adaptive batching starts at one row", Config{Sessions: 1, Slots: 2, Batching: Batching{Enabled: true, MaxBatchSize: 16, Adaptive: true}},
			0, []int{0}, true, core.SchedStats{Sessions: 2, BatchLimit: 1}, ""},
		{"a session fails to open", Config{Sessions: 2, Slots: 2},
			2, nil, false, core.SchedStats{}, "cannot open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := &fakeOpener{newSession: func() *fakeSession { return newFakeSession(2) }, failAt: tt.failAt}
			sc, err := New(tt.cfg, nil, nil, nil).Schedule(open)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, errOpen) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				for i, s := range open.opened {
					if !s.closed {
						t.Fatalf("session %d left open after the failure", i)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(open.threads, tt.threads) {
				t.Fatalf("sessions opened with threads %v, want %v", open.threads, tt.threads)
			}
			if _, ok := sc.(*schedule).Runner.(*Batcher); ok != tt.batched {
				t.Fatalf("batcher in front: %v, want %v", ok, tt.batched)
			}
			want := tt.stats
			want.GoProcs = runtime.GOMAXPROCS(0)
			if got := sc.Stats(); got != want {
				t.Fatalf("Stats() = %+v, want %+v", got, want)
			}
			if sc.Provider().Name() != core.CPUProvider {
				t.Fatalf("provider %s", sc.Provider().Name())
			}
			res, err := sc.Predict(context.Background(), row(2, 5))
			if err != nil || answerOf(res, 2, 5) != nil {
				t.Fatalf("%v %v", err, answerOf(res, 2, 5))
			}
			if err := sc.Close(); err != nil {
				t.Fatal(err)
			}
			for i, s := range open.opened {
				if !s.closed {
					t.Fatalf("session %d left open by Close", i)
				}
			}
		})
	}
}

// TestScheduleReportsTheReclaimer: Stats say whether memory was given back.
func TestScheduleReportsTheReclaimer(t *testing.T) {
	m := &fakeActivity{}
	r := NewReclaimer(m, time.Second)
	open := &fakeOpener{newSession: func() *fakeSession { return newFakeSession(2) }}
	sc, err := New(Config{Sessions: 1, Slots: 1}, nil, nil, r).Schedule(open)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	m.end(time.Unix(0, 0))
	if sc.Stats().MemoryReleased {
		t.Fatal("released before the reclaimer ran")
	}
	r.check(time.Unix(2, 0))
	if !sc.Stats().MemoryReleased {
		t.Fatal("not released after the reclaimer gave memory back")
	}
}

// TestScheduleWithoutBatchDimension: batching asked for a model that
// cannot merge requests leaves the pool in front, and says why.
func TestScheduleWithoutBatchDimension(t *testing.T) {
	open := &fakeOpener{newSession: func() *fakeSession { return newFakeSession(2) }}
	sc, err := New(Config{Sessions: 1, Slots: 1, Batching: Batching{Enabled: true, MaxBatchSize: 8}}, nil, nil, nil).Schedule(&fixedOpener{open})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, ok := sc.(*schedule).Runner.(*Pool); !ok {
		t.Fatal("a batcher in front of a model without a batch dimension")
	}
	if st := sc.Stats(); st.BatchLimit != 0 {
		t.Fatalf("Stats() = %+v: a batch limit without batching", st)
	}
}

// fixedOpener opens the fake model with a fixed first dimension.
type fixedOpener struct{ *fakeOpener }

func (o *fixedOpener) Open(threads int) (core.Session, error) {
	s, err := o.fakeOpener.Open(threads)
	if err != nil {
		return nil, err
	}
	return &fixedModel{fakeSession: s.(*fakeSession)}, nil
}
