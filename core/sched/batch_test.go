package sched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// answer is what one request got.
type answer struct {
	res core.Result
	err error
}

// send runs in on b in a goroutine; its answer arrives on the channel.
func send(ctx context.Context, b core.Runner, in []*tensor.Tensor) <-chan answer {
	c := make(chan answer, 1)
	go func() {
		res, err := b.Predict(ctx, in)
		c <- answer{res, err}
	}()
	return c
}

// occupy sends a request that takes one of b's slots and waits until f
// runs it; its answer arrives on the channel once its run is let through.
func occupy(t *testing.T, b *Batcher, f *fakeSession, v float32) <-chan answer {
	t.Helper()
	before := len(f.runs())
	c := send(context.Background(), b, row(f.cols, v))
	eventually(t, "the occupying run", func() bool { return len(f.runs()) == before+1 })
	return c
}

// queue sends n one-row requests (values from, from+1, ...) that wait in
// b's queue, and waits until they all do.
func queue(t *testing.T, ctx context.Context, b *Batcher, cols int64, from float32, n int) []<-chan answer {
	t.Helper()
	out := make([]<-chan answer, n)
	for i := range out {
		q := b.Queued()
		out[i] = send(ctx, b, row(cols, from+float32(i)))
		eventually(t, "queued", func() bool { return b.Queued() == q+1 })
	}
	return out
}

func TestBatcherMergesAndSplits(t *testing.T) {
	tests := []struct {
		name     string
		queued   int
		maxBatch int
		pooled   bool
		want     []int64 // rows of each run
	}{
		{"two queued requests merge", 2, 8, false, []int64{1, 2}},
		{"up to the batch size", 5, 3, false, []int64{1, 3, 2}},
		{"pooled outputs", 4, 8, true, []int64{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bubble(t, 0, func(t *testing.T) {
				f := newFakeSession(3)
				f.gate, f.pooled = make(chan struct{}, 10), tt.pooled
				b, err := NewBatcher(f, BatchOptions{MaxBatchSize: tt.maxBatch, Slots: 1, Fixed: true})
				if err != nil {
					t.Fatal(err)
				}
				first := occupy(t, b, f, 0)
				answers := queue(t, context.Background(), b, f.cols, 1, tt.queued)
				for range tt.want {
					f.gate <- struct{}{}
				}
				if a := <-first; a.err != nil || answerOf(a.res, f.cols, 0) != nil {
					t.Fatalf("the first request: %v %v", a.err, answerOf(a.res, f.cols, 0))
				}
				for i, c := range answers {
					a := <-c
					if a.err != nil {
						t.Fatalf("request %d: %v", i+1, a.err)
					}
					if err := answerOf(a.res, f.cols, float32(i+1)); err != nil {
						t.Fatalf("request %d: %v", i+1, err)
					}
					a.res.Release()
				}
				if got := f.runs(); !slices.Equal(got, tt.want) {
					t.Fatalf("runs of %v rows, want %v", got, tt.want)
				}
				st := b.Stats()
				if st.Runs != int64(len(tt.want)) || st.MergedRuns != int64(len(tt.want)-1) || st.MergedRequests != int64(tt.queued) {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

func TestBatcherIdleRunsAtOnce(t *testing.T) {
	f := newFakeSession(2)
	b, err := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		res, err := b.Predict(context.Background(), row(2, float32(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := answerOf(res, 2, float32(i)); err != nil {
			t.Fatal(err)
		}
		res.Release()
	}
	if st := b.Stats(); st.Runs != 20 || st.MergedRuns != 0 {
		t.Fatalf("sequential requests: %+v", st)
	}
}

func TestBatcherErrorsReachEveryMember(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		f.gate, f.fail = make(chan struct{}, 10), &core.InferenceError{Err: errors.New("boom")}
		b, err := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		answers := append([]<-chan answer{occupy(t, b, f, 0)}, queue(t, context.Background(), b, 2, 1, 4)...)
		f.gate <- struct{}{} // first run (alone) fails
		f.gate <- struct{}{} // the merged run of the other four fails
		for _, c := range answers {
			a := <-c
			var ie *core.InferenceError
			if !errors.As(a.err, &ie) || ie.Error() != "Inference failed: boom" {
				t.Fatalf("member error = %v", a.err)
			}
		}
		if got := f.runs(); !slices.Equal(got, []int64{1, 4}) {
			t.Fatalf("runs = %v, want [1 4]", got)
		}
	})
}

func TestBatcherCanceledWhileQueued(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		f.gate = make(chan struct{}, 10)
		b, _ := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
		first := occupy(t, b, f, 0)
		ctx, cancel := context.WithCancel(context.Background())
		second := queue(t, ctx, b, 2, 1, 1)[0]
		cancel()
		if a := <-second; !errors.Is(a.err, core.ErrCanceled) {
			t.Fatalf("canceled member: %v", a.err)
		}
		if b.Queued() != 0 {
			t.Fatal("canceled request still queued")
		}
		f.gate <- struct{}{}
		if a := <-first; a.err != nil {
			t.Fatal(a.err)
		}
		if got := f.runs(); len(got) != 1 {
			t.Fatalf("the canceled request ran: %v", got)
		}
	})
}

// TestBatcherMaxQueueDelay: with a session free, a request waits up to
// MaxQueueDelay for others; a group that fills the batch goes at once.
func TestBatcherMaxQueueDelay(t *testing.T) {
	t.Run("a full batch does not wait", func(t *testing.T) {
		f := newFakeSession(2)
		b, _ := NewBatcher(f, BatchOptions{MaxBatchSize: 3, MaxQueueDelay: time.Hour, Slots: 1, Fixed: true})
		var answers []<-chan answer
		for i := range 3 {
			answers = append(answers, send(context.Background(), b, row(2, float32(i))))
		}
		for i, c := range answers {
			if a := <-c; a.err != nil || answerOf(a.res, 2, float32(i)) != nil {
				t.Fatalf("request %d: %v", i, a.err)
			}
		}
		if got := f.runs(); !slices.Equal(got, []int64{3}) {
			t.Fatalf("runs = %v, want one merged run of 3", got)
		}
	})
	t.Run("a lone request goes once the delay is up", func(t *testing.T) {
		f := newFakeSession(2)
		b, _ := NewBatcher(f, BatchOptions{MaxBatchSize: 8, MaxQueueDelay: time.Millisecond, Slots: 1, Fixed: true})
		res, err := b.Predict(context.Background(), row(2, 7))
		if err != nil || answerOf(res, 2, 7) != nil {
			t.Fatalf("%v %v", err, answerOf(res, 2, 7))
		}
	})
}

func TestBatcherSharesTheQueueBetweenSlots(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		f := newFakeSession(2)
		f.gate = make(chan struct{}, 20)
		b, _ := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 2, Fixed: true})
		// Two requests take both slots; eight more queue behind them.
		answers := []<-chan answer{occupy(t, b, f, 0), occupy(t, b, f, 0)}
		answers = append(answers, queue(t, context.Background(), b, 2, 1, 8)...)
		// A slot frees: it takes half of the queue, not all of it, so that the
		// other slot has work when it frees.
		f.gate <- struct{}{}
		eventually(t, "the first merged run", func() bool { return len(f.runs()) == 3 })
		if third := f.runs()[2]; third != 4 {
			t.Fatalf("the first merged run took %d rows of 8 queued with 2 slots, want 4", third)
		}
		for range 10 {
			f.gate <- struct{}{}
		}
		for i, c := range answers {
			if a := <-c; a.err != nil {
				t.Fatalf("request %d: %v", i, a.err)
			}
		}
		var rows int64
		for _, n := range f.runs() {
			rows += n
		}
		if rows != 10 {
			t.Fatalf("runs %v cover %d rows, want 10", f.runs(), rows)
		}
	})
}

// TestBatcherLimitStartsSmallWhenAdaptive: an adaptive batcher starts
// settled on one row (probing two at once); a fixed one merges up to
// MaxBatchSize.
func TestBatcherLimitStartsSmallWhenAdaptive(t *testing.T) {
	f := newFakeSession(2)
	for _, tt := range []struct {
		opts BatchOptions
		want int
	}{
		{BatchOptions{MaxBatchSize: 8, Slots: 1}, 1},
		{BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true}, 8},
		{BatchOptions{MaxBatchSize: 1, Slots: 1}, 1},
	} {
		b, err := NewBatcher(f, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Stats().Limit; got != tt.want {
			t.Errorf("%+v: limit %d, want %d", tt.opts, got, tt.want)
		}
	}
}

// TestBatcherRefusesUnbatchableModels: a model without a dynamic batch
// dimension on every input and output cannot be batched.
func TestBatcherRefusesUnbatchableModels(t *testing.T) {
	f := newFakeSession(2)
	fixed := &fixedModel{fakeSession: f}
	if _, err := NewBatcher(fixed, BatchOptions{MaxBatchSize: 8}); err == nil || !strings.Contains(err.Error(), `input "x" has no dynamic batch dimension`) {
		t.Fatalf("NewBatcher on a fixed-shape model: %v", err)
	}
}

// fixedModel is the fake model with a fixed first dimension.
type fixedModel struct{ *fakeSession }

func (m *fixedModel) Info() core.ModelInfo {
	info := m.fakeSession.Info()
	info.Inputs[0].Shape = []int64{1, m.cols}
	return info
}

// TestMergedPartsShareStorage merges requests into one run whose output
// storage is pooled: each member's part views it, and it goes back to the
// pools only when the last part is released. A third member gives up while
// the merged run is under way: it still waits for the run and releases the
// part it was handed, or the storage would never go back.
func TestMergedPartsShareStorage(t *testing.T) {
	const cols = 20000 // 80 KB of float32 a row: pooled
	for _, giveUp := range []bool{false, true} {
		t.Run(fmt.Sprintf("a member gives up: %v", giveUp), func(t *testing.T) {
			bubble(t, 0, func(t *testing.T) {
				f := newFakeSession(cols)
				f.gate, f.pooled = make(chan struct{}, 10), true
				b, err := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
				if err != nil {
					t.Fatal(err)
				}
				first := occupy(t, b, f, 0)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				answers := queue(t, context.Background(), b, cols, 1, 2)
				if giveUp {
					answers = append(answers, queue(t, ctx, b, cols, 3, 1)...)
				}
				f.gate <- struct{}{}
				if a := <-first; a.err != nil {
					t.Fatal(a.err)
				}
				eventually(t, "the merged run", func() bool { return len(f.runs()) == 2 })
				if merged := f.runs()[1]; merged != int64(len(answers)) {
					t.Fatalf("the merged run has %d rows, want %d", merged, len(answers))
				}
				if giveUp {
					cancel() // taken into the group already: its run goes on
				}
				f.gate <- struct{}{}

				var parts []core.Result
				for i := 0; i < 2; i++ {
					a := <-answers[i]
					if a.err != nil {
						t.Fatalf("member %d: %v", i, a.err)
					}
					if err := answerOf(a.res, cols, float32(i+1)); err != nil {
						t.Fatalf("member %d: %v", i, err)
					}
					parts = append(parts, a.res)
				}
				if giveUp {
					if a := <-answers[2]; !errors.Is(a.err, core.ErrCanceled) || a.res != nil {
						t.Fatalf("the member that gave up: %v, %v", a.res, a.err)
					}
				}
				f.mu.Lock()
				made := f.made // the merged run's, the last made
				f.mu.Unlock()
				size := len(answers) * cols
				parts[0].Release()
				if reusedBy(made, size) {
					t.Fatal("the storage went back while a part still viewed it")
				}
				parts[1].Release()
				parts[1].Release() // a second Release gives nothing back twice
				if !reusedBy(made, size) {
					t.Fatal("the storage did not go back once every part was released")
				}
			})
		})
	}
}

// reusedBy reports whether the tensor pools hand out storage at made for
// n float32s, which they do only once it has gone back to them.
func reusedBy(made *float32, n int) bool {
	s := tensor.MakeSlice[float32](n)
	defer tensor.PutSlice(s)
	return &s[0] == made
}

// TestSplitFailureGivesStorageBack: a merged run whose output has more rows
// than the members brought cannot be split; every member gets the error,
// and the run's pooled output storage goes back to the pools.
func TestSplitFailureGivesStorageBack(t *testing.T) {
	bubble(t, 0, func(t *testing.T) {
		const cols = 20000
		f := newFakeSession(cols)
		f.gate, f.pooled, f.extraRow = make(chan struct{}, 10), true, true
		b, err := NewBatcher(f, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		first := occupy(t, b, f, 0)
		answers := queue(t, context.Background(), b, cols, 1, 2)
		f.gate <- struct{}{}
		f.gate <- struct{}{}
		if a := <-first; a.err != nil {
			t.Fatal(a.err)
		}
		for i, c := range answers {
			a := <-c
			var ie *core.InferenceError
			if a.res != nil || !errors.As(a.err, &ie) || !strings.Contains(a.err.Error(), "not a batch of 2 rows") {
				t.Fatalf("member %d of the run that could not be split: %v, %v", i, a.res, a.err)
			}
		}
		f.mu.Lock()
		made := f.made
		f.mu.Unlock()
		if !reusedBy(made, 3*cols) {
			t.Fatal("the output storage of the run that could not be split did not go back to the pools")
		}
	})
}

// TestBatcherMergesConcurrentRequests sends many requests at once from many
// goroutines with every run gated open: whatever merges happen, each answer
// is its own request's.
func TestBatcherMergesConcurrentRequests(t *testing.T) {
	f := newFakeSession(4)
	b, err := NewBatcher(f, BatchOptions{MaxBatchSize: 4, Slots: 2, Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.Predict(context.Background(), row(4, float32(i)))
			if err == nil {
				err = answerOf(res, 4, float32(i))
				res.Release()
			}
			if err != nil {
				errs <- fmt.Errorf("request %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
