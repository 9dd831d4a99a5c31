package bench_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// The tests of RunLevel run in a synctest bubble: time is the bubble's fake
// clock, which moves only when every goroutine of the bubble is blocked, so
// each phase lasts exactly its duration and every worker gets its turn
// however loaded the machine is.

func TestRunLevelRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		var mu sync.Mutex
		workers := map[int]bool{}
		op := func(_ context.Context, w int, _ int64) (int, error) {
			calls.Add(1)
			mu.Lock()
			workers[w] = true
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
			return 200, nil
		}
		l := bench.RunLevel(context.Background(), 4, 50*time.Millisecond, bench.Bounds{Requests: 200}, op)
		if l.Requests != 200 || l.Errors != 0 || l.Concurrency != 4 || l.Interrupted {
			t.Fatalf("level = %+v, want 200 requests at concurrency 4", l)
		}
		// The warm-up: 4 workers, each a request every 100µs for 50ms.
		if got, want := calls.Load(), int64(200+4*500); got != want {
			t.Fatalf("%d calls, want %d: 200 recorded after a warm-up of %d", got, want, want-200)
		}
		if len(workers) != 4 {
			t.Fatalf("workers used: %v, want 0-3", workers)
		}
		// 200 requests of 100µs on 4 workers: 5ms.
		if l.ElapsedS != 0.005 || l.ThroughputRPS != 40000 || l.LatencyUS.P50 != 100 {
			t.Fatalf("elapsed %vs, throughput %v, p50 %v µs; want 0.005s, 40000/s, 100µs", l.ElapsedS, l.ThroughputRPS, l.LatencyUS.P50)
		}
	})
}

func TestRunLevelDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		op := func(context.Context, int, int64) (int, error) {
			time.Sleep(time.Millisecond)
			return 0, nil
		}
		start := time.Now()
		l := bench.RunLevel(context.Background(), 3, 0, bench.Bounds{Duration: 200 * time.Millisecond}, op)
		// Each of the 3 workers starts a request at 0, 1, … 199 ms.
		if took := time.Since(start); took != 200*time.Millisecond {
			t.Fatalf("a 200ms level took %v", took)
		}
		if l.ElapsedS != 0.2 || l.Requests != 3*200 {
			t.Fatalf("level = %+v, want 600 requests in 0.2s", l)
		}
	})
}

func TestRunLevelFirstBoundWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		op := func(context.Context, int, int64) (int, error) { return 0, nil }
		start := time.Now()
		l := bench.RunLevel(context.Background(), 2, 0, bench.Bounds{Duration: time.Minute, Requests: 1000}, op)
		if l.Requests != 1000 || time.Since(start) != 0 {
			t.Fatalf("%d requests in %v; the request count should end the level at once", l.Requests, time.Since(start))
		}
	})
}

func TestRunLevelInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		op := func(ctx context.Context, _ int, _ int64) (int, error) {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Millisecond):
				return 200, nil
			}
		}
		const at = 100*time.Millisecond + 500*time.Microsecond
		time.AfterFunc(at, cancel)
		start := time.Now()
		l := bench.RunLevel(ctx, 2, 0, bench.Bounds{Duration: time.Minute}, op)
		if took := time.Since(start); took != at {
			t.Fatalf("the level ended %v after the start, want at the cancel (%v)", took, at)
		}
		// Requests end at 1, 2, … 100 ms on each worker; the one under way
		// at the cancel is left out.
		if !l.Interrupted || l.Errors != 0 || l.Requests != 2*100 {
			t.Fatalf("level = %+v: want interrupted, 200 requests, and no error for the canceled ones", l)
		}
	})
}

func TestRunLevelCountsErrors(t *testing.T) {
	boom := errors.New("boom")
	op := func(_ context.Context, _ int, seq int64) (int, error) {
		if seq%4 == 3 {
			return 0, boom
		}
		return 200, nil
	}
	l := bench.RunLevel(context.Background(), 1, 0, bench.Bounds{Requests: 40}, op)
	if l.Requests != 40 || l.Errors != 10 || l.FirstError != "boom" {
		t.Fatalf("level = %+v, want 10 errors of 40", l)
	}
}

func TestBoundsAreCapped(t *testing.T) {
	tests := []struct {
		name    string
		opts    func(o *bench.Options)
		wantErr string
	}{
		{"valid", func(*bench.Options) {}, ""},
		{"duration over the cap", func(o *bench.Options) { o.Duration = 11 * time.Minute }, "at most 10m0s per level"},
		{"requests over the cap", func(o *bench.Options) { o.Duration, o.Requests = 0, 10_000_001 }, "at most 10000000 per level"},
		{"no bound", func(o *bench.Options) { o.Duration = 0 }, "give --duration or --requests"},
		{"warm-up over the cap", func(o *bench.Options) { o.Warmup = 2 * time.Minute }, "--warmup"},
		{"concurrency 0", func(o *bench.Options) { o.Concurrency = []int{1, 0} }, "between 1 and 1024"},
		{"concurrency over the cap", func(o *bench.Options) { o.Concurrency = []int{2000} }, "between 1 and 1024"},
		{"too long in total", func(o *bench.Options) { o.Concurrency, o.Duration = []int{1, 2, 4, 8, 16, 32, 64}, 9*time.Minute }, "more than the 1h0m0s a run may take"},
		{"no target", func(o *bench.Options) { o.URL = "" }, "give a MODEL_NAME"},
		{"both targets", func(o *bench.Options) { o.Model = "m.onnx" }, "not both"},
		{"serve flags with --url", func(o *bench.Options) { o.ServeArgs = []string{"--workers", "2"} }, "need a MODEL_NAME"},
		{"input with shapes", func(o *bench.Options) { o.InputFile = "b.json"; o.Shapes = map[string][]int64{"x": {1}} }, "--input gives the whole request body"},
		{"remote", func(o *bench.Options) { o.URL = "http://192.0.2.1:8080" }, "not a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := bench.Options{URL: "http://127.0.0.1:8080", Concurrency: []int{1, 2}, Duration: time.Second, Timeout: time.Second, Batch: 1}
			tt.opts(&o)
			err := o.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
