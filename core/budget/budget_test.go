package budget

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReserve: what a request may reserve, and what it is told when it
// may not.
func TestReserve(t *testing.T) {
	tests := []struct {
		name    string
		reserve []int64
		// want is the error's kind after the last reservation: "" (none),
		// "limit" or "busy"; msg a part of its message.
		want, msg string
		held      int64
	}{
		{name: "within", reserve: []int64{100, 200}, held: 300},
		{name: "nothing", reserve: []int64{0, -5}, held: 0},
		{name: "the whole budget", reserve: []int64{1 << 20}, held: 1 << 20},
		{name: "more than the budget at once", reserve: []int64{1<<20 + 1}, want: "limit", msg: "The request needs 1.1 MiB of memory to decode, more than the 1 MiB that requests may hold at once (limits.request_memory)"},
		{name: "more than the budget in all", reserve: []int64{600 << 10, 600 << 10}, want: "limit", msg: "needs 1.2 MiB", held: 600 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(1<<20, time.Minute)
			ctx, end := m.Begin(context.Background())
			var err error
			for _, n := range tt.reserve {
				if err = Reserve(ctx, n, "to decode"); err != nil {
					break
				}
			}
			var limit *core.LimitError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Reserve: %v", err)
			case tt.want == "limit" && (!errors.As(err, &limit) || limit.Key != KeySize):
				t.Fatalf("Reserve: %v, want a LimitError of %s", err, KeySize)
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("message %q, want it to hold %q", err, tt.msg)
			}
			if got := m.Stats().InUse; got != tt.held {
				t.Errorf("in use %d, want %d", got, tt.held)
			}
			end()
			end() // a second end gives nothing back twice
			if got := m.Stats().InUse; got != 0 {
				t.Errorf("in use %d after the request ended, want 0", got)
			}
		})
	}
}

// TestNoTicket: work that carries no ticket (a warm-up, a test) reserves
// nothing, and a nil budget bounds nothing.
func TestNoTicket(t *testing.T) {
	if err := Reserve(context.Background(), 1<<60, "anything"); err != nil {
		t.Fatal(err)
	}
	var m *Memory
	ctx, end := m.Begin(context.Background())
	defer end()
	if err := Reserve(ctx, 1<<60, "anything"); err != nil {
		t.Fatal(err)
	}
}

// TestBusy: a request that finds the budget held waits for it, and gets
// it once it is given back; one whose wait ends first is told to come
// back (BusyError), or, if it went away, that it was canceled. Nothing
// is held afterwards.
func TestBusy(t *testing.T) {
	// In a synctest bubble: synctest.Wait returns once the goroutines
	// that reserve are blocked, waiting for memory, and time is the fake
	// clock, so that limits.memory_wait passes when nothing else can
	// happen.
	synctest.Test(t, func(t *testing.T) {
		m := New(1000, time.Hour)
		holder, end := m.Begin(context.Background())
		if err := Reserve(holder, 800, "x"); err != nil {
			t.Fatal(err)
		}

		// Waits, then gets it once the holder ends.
		waiter, endWaiter := m.Begin(context.Background())
		got := make(chan error, 1)
		go func() { got <- Reserve(waiter, 500, "to decode its pictures") }()
		synctest.Wait() // it waits
		if w := m.Stats().Waited; w != 1 {
			t.Fatalf("%d requests waited, want 1", w)
		}
		end()
		if err := <-got; err != nil {
			t.Fatalf("waiter: %v", err)
		}
		endWaiter()

		// A deadline that passes while waiting: busy, with Retry-After.
		hold, endHold := m.Begin(context.Background())
		if err := Reserve(hold, 1000, "x"); err != nil {
			t.Fatal(err)
		}
		dl, cancel := context.WithDeadline(context.Background(), time.Now())
		defer cancel()
		dl, endDL := m.Begin(dl)
		err := Reserve(dl, 10, "for its outputs")
		var busy *core.BusyError
		if !errors.As(err, &busy) || busy.RetryAfter != RetryAfter || !strings.Contains(err.Error(), "it waited until its deadline") || !strings.Contains(err.Error(), "for its outputs") {
			t.Errorf("deadline passed: %v, want a BusyError", err)
		}
		endDL()

		// limits.memory_wait passes: busy, naming the key.
		short := New(1000, time.Nanosecond)
		sh, endSh := short.Begin(context.Background())
		_ = Reserve(sh, 1000, "x")
		w, endW := short.Begin(context.Background())
		if err := Reserve(w, 1, "x"); !errors.As(err, &busy) || !strings.Contains(err.Error(), "(limits.memory_wait)") {
			t.Errorf("wait passed: %v, want a BusyError naming limits.memory_wait", err)
		}
		endW()
		endSh()

		// The client leaves while waiting: canceled, not busy.
		gone, leave := context.WithCancel(context.Background())
		gone, endGone := m.Begin(gone)
		done := make(chan error, 1)
		go func() { done <- Reserve(gone, 10, "x") }()
		synctest.Wait()
		if w := m.Stats().Waited; w != 3 {
			t.Fatalf("%d requests waited, want 3", w)
		}
		leave()
		if err := <-done; !errors.Is(err, core.ErrCanceled) || errors.As(err, &busy) {
			t.Errorf("client gone: %v, want core.ErrCanceled", err)
		}
		endGone()
		endHold()
		if s := m.Stats(); s.InUse != 0 || s.Busy != 1 || s.Peak != 1000 {
			t.Errorf("stats %+v: want nothing in use, 1 refused busy, a peak of 1000", s)
		}
	})
}

// TestConcurrentRequests: many requests reserving and ending at once
// never hold more than the budget, and give everything back.
func TestConcurrentRequests(t *testing.T) {
	m := New(10_000, time.Hour)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, end := m.Begin(context.Background())
			defer end()
			for range 10 {
				if err := Reserve(ctx, int64(100+i), "x"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s := m.Stats(); s.InUse != 0 || s.Peak > 10_000 || s.Reserved != 500 {
		t.Errorf("stats %+v: want nothing in use, a peak within the budget, 500 reservations", s)
	}
}

// TestOutputs: the outputs' memory from the model's shapes, their
// dynamic dimensions bound by name to the inputs'.
func TestOutputs(t *testing.T) {
	info := core.ModelInfo{
		Inputs: []core.InputSpec{
			{Name: "input_ids", Type: "int64", Shape: []int64{-1, -1}, DimNames: []string{"batch", "sequence"}, Kind: core.KindTensor},
			{Name: "attention_mask", Type: "int64", Shape: []int64{-1, -1}, DimNames: []string{"batch", "sequence"}, Kind: core.KindTensor},
		},
		Outputs: []core.OutputSpec{
			{Name: "last_hidden_state", Type: "float32", Shape: []int64{-1, -1, 384}, DimNames: []string{"batch", "sequence", ""}, Kind: core.KindTensor},
			{Name: "pooled", Type: "float16", Shape: []int64{-1, 384}, DimNames: []string{"batch", ""}, Kind: core.KindTensor},
			{Name: "unnamed", Type: "int64", Shape: []int64{-1, 7}, DimNames: []string{"", ""}, Kind: core.KindTensor},
			{Name: "labels", Type: "string", Shape: []int64{-1}, DimNames: []string{"batch"}, Kind: core.KindTensor},
			{Name: "scores", Type: "seq(map(string,float32))", Kind: core.KindSequence},
		},
	}
	ids := &tensor.Tensor{DType: tensor.Int64, Shape: []int64{100, 62}}
	want := int64(100*62*384*4 + 100*384*2 + 1*7*8 + 100*stringBytes)
	if got := Outputs(info, []*tensor.Tensor{ids, nil}); got != want {
		t.Errorf("Outputs = %d, want %d", got, want)
	}
	huge := &tensor.Tensor{DType: tensor.Int64, Shape: []int64{1 << 40, 1 << 40}}
	if got := Outputs(info, []*tensor.Tensor{huge, nil}); got != 1<<62 {
		t.Errorf("Outputs of a huge batch = %d, want the cap 2^62", got)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1025: "1.1 KiB",
		256 << 20: "256 MiB", 1<<20 + 1: "1.1 MiB", 3 << 29: "1.5 GiB", 40 << 30: "40 GiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
