package sched

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/svc-dev/svc/core"
)

func TestGroupByLength(t *testing.T) {
	tests := []struct {
		name           string
		sorted         []int
		at, budget     int
		wantLo, wantHi int
	}{
		{"alone", []int{5}, 0, 100, 0, 0},
		{"all fit", []int{2, 3, 4}, 0, 12, 0, 2},
		{"the nearer lengths first", []int{2, 9, 10, 11, 30}, 2, 33, 1, 3},
		{"shorter pads less than longer", []int{8, 10, 20}, 1, 40, 0, 1},
		{"budget of one", []int{3, 4, 5}, 1, 7, 1, 1},
		{"longer than the budget runs alone", []int{3, 50}, 1, 10, 1, 1},
		{"up to the budget", []int{4, 4, 4, 4, 4, 4}, 0, 16, 0, 3},
		{"no more padding than MaxPadding", []int{2, 2, 2, 40}, 0, 1000, 0, 2},
		{"a short one does not join long ones", []int{2, 40, 40}, 1, 1000, 1, 2},
		{"within MaxPadding", []int{30, 36, 40}, 2, 1000, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := GroupByLength(tt.sorted, tt.at, tt.budget)
			if lo != tt.wantLo || hi != tt.wantHi {
				t.Fatalf("got [%d, %d], want [%d, %d]", lo, hi, tt.wantLo, tt.wantHi)
			}
			if lo <= tt.at && tt.at <= hi && hi > lo && tt.sorted[hi]*(hi-lo+1) > tt.budget {
				t.Fatalf("[%d, %d] costs %d, over %d", lo, hi, tt.sorted[hi]*(hi-lo+1), tt.budget)
			}
		})
	}
}

func TestInOrder(t *testing.T) {
	got := InOrder([]int{2, 10, 2, 2, 10, 3}, 20)
	want := [][2]int{{0, 2}, {2, 4}, {4, 6}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// batchLog records the batches a Tokens ran, each as its items' refs.
type batchLog struct {
	mu      sync.Mutex
	batches [][]int
	// gate, when set, holds each run until it is closed.
	gate chan struct{}
	// started is told of each run as it starts.
	started chan int
	err     error
}

func (l *batchLog) run(_ context.Context, refs []any) error {
	if l.started != nil {
		l.started <- len(refs)
	}
	if l.gate != nil {
		<-l.gate
	}
	b := make([]int, len(refs))
	for i, r := range refs {
		b[i] = r.(int)
	}
	l.mu.Lock()
	l.batches = append(l.batches, b)
	l.mu.Unlock()
	return l.err
}

// TestTokensSplitsARequest: a request larger than one batch runs in
// batches within the budget, each input once, grouped by length.
func TestTokensSplitsARequest(t *testing.T) {
	log := &batchLog{}
	q := NewTokens(40, 1, log.run)
	lens := []int{10, 2, 10, 2, 10, 2, 10, 2, 10, 2}
	refs := make([]any, len(lens))
	for i := range refs {
		refs[i] = i
	}
	if err := q.Run(context.Background(), lens, refs); err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	padding := 0
	for _, b := range log.batches {
		longest := 0
		for _, i := range b {
			seen[i]++
			longest = max(longest, lens[i])
		}
		if longest*len(b) > 40 {
			t.Errorf("batch %v costs %d, over the budget of 40", b, longest*len(b))
		}
		for _, i := range b {
			padding += longest - lens[i]
		}
	}
	for i := range lens {
		if seen[i] != 1 {
			t.Errorf("input %d ran %d times", i, seen[i])
		}
	}
	if padding != 0 {
		t.Errorf("batches %v pad %d tokens: the lengths were not grouped", log.batches, padding)
	}
}

// TestTokensMergesWaitingRequests: while a batch runs, the inputs of
// requests that arrive wait, and the next batches group them by length
// across requests.
func TestTokensMergesWaitingRequests(t *testing.T) {
	log := &batchLog{gate: make(chan struct{}), started: make(chan int, 16)}
	q := NewTokens(100, 1, log.run)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	run := func(k int, lens []int, refs []any) {
		defer wg.Done()
		errs[k] = q.Run(context.Background(), lens, refs)
	}
	wg.Add(1)
	go run(0, []int{5}, []any{0})
	<-log.started // the first runs, holding the one slot
	// Two requests queue behind it, each with a short and a long input.
	wg.Add(2)
	go run(1, []int{3, 40}, []any{1, 2})
	go run(2, []int{40, 3}, []any{3, 4})
	waitQueued(t, q, 4)
	close(log.gate)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", k, err)
		}
	}
	var got [][]int
	for _, b := range log.batches[1:] {
		slices.Sort(b)
		got = append(got, b)
	}
	slices.SortFunc(got, func(a, b []int) int { return a[0] - b[0] })
	if want := [][]int{{1, 4}, {2, 3}}; !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Fatalf("batches after the first %v, want the short ones and the long ones together %v", got, want)
	}
}

// waitQueued waits until n inputs wait in q.
func waitQueued(t *testing.T, q *Tokens, n int) {
	t.Helper()
	for {
		q.mu.Lock()
		waiting, ch := len(q.waiting), q.changed
		q.mu.Unlock()
		if waiting == n {
			return
		}
		<-ch
	}
}

// TestTokensCancel: a request that ends while its inputs wait is
// answered core.Canceled and its inputs never run; one whose batch fails
// gets the batch's error.
func TestTokensCancel(t *testing.T) {
	log := &batchLog{gate: make(chan struct{}), started: make(chan int, 16)}
	q := NewTokens(100, 1, log.run)
	done := make(chan error, 1)
	go func() { done <- q.Run(context.Background(), []int{5}, []any{0}) }()
	<-log.started
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- q.Run(ctx, []int{5, 6}, []any{1, 2}) }()
	waitQueued(t, q, 2)
	cancel()
	if err := <-waited; !errors.Is(err, core.ErrCanceled) {
		t.Fatalf("a request that ended while it waited: %v, want core.ErrCanceled", err)
	}
	close(log.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(log.batches) != 1 || !slices.Equal(log.batches[0], []int{0}) {
		t.Fatalf("batches %v: the ended request's inputs ran", log.batches)
	}
	log.err, log.gate, log.started = errors.New("the run failed"), nil, nil
	if err := q.Run(context.Background(), []int{1, 2, 3}, []any{3, 4, 5}); err == nil || err.Error() != "the run failed" {
		t.Fatalf("a failed batch: %v", err)
	}
}
