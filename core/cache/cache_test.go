package cache_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/cache"
	"github.com/svc-dev/svc/core/tensor"
)

// fakeRunner answers each input tensor doubled, counting its runs; gate,
// when set, holds each run until it is closed or the run's context ends.
type fakeRunner struct {
	runs atomic.Int64
	gate chan struct{}
	fail error
}

func (f *fakeRunner) run(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	f.runs.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, core.Canceled(ctx)
		}
	}
	if f.fail != nil {
		return nil, f.fail
	}
	in := inputs[0].Data.([]float32)
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = 2 * v
	}
	return core.NewResult([]*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{int64(len(out))}, Data: out}}), nil
}

func input(vals ...float32) []*tensor.Tensor {
	return []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{int64(len(vals))}, Data: vals}}
}

func newCache(t *testing.T, o cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// do asks c for inputs on epoch 1 (which serves), running f on a miss.
func do(ctx context.Context, c *cache.Cache, f *fakeRunner, inputs []*tensor.Tensor) (core.Result, core.CacheStatus, error) {
	ctl := &core.CacheControl{}
	res, err := c.Do(ctx, 1, cache.KeyOf(1, inputs), ctl, func() (core.Result, error) { return f.run(ctx, inputs) })
	return res, ctl.Status, err
}

func first(t *testing.T, res core.Result) []float32 {
	t.Helper()
	out, err := res.Tensor(0)
	if err != nil {
		t.Fatal(err)
	}
	return out.Data.([]float32)
}

func TestNewRefusesNoSize(t *testing.T) {
	for _, size := range []int64{0, -1} {
		if _, err := cache.New(cache.Options{Size: size}); !errors.Is(err, cache.ErrSize) {
			t.Errorf("size %d: got %v, want ErrSize", size, err)
		}
	}
}

func TestKeyOf(t *testing.T) {
	str := func(s ...string) []*tensor.Tensor {
		return []*tensor.Tensor{{DType: tensor.String, Shape: []int64{int64(len(s))}, Data: s}}
	}
	base := cache.KeyOf(1, input(1, 2, 3, 4))
	tests := []struct {
		name string
		key  cache.Key
		same bool
	}{
		{"the same tensors", cache.KeyOf(1, input(1, 2, 3, 4)), true},
		{"another value", cache.KeyOf(1, input(1, 2, 3, 5)), false},
		{"another generation", cache.KeyOf(2, input(1, 2, 3, 4)), false},
		{"another shape", cache.KeyOf(1, []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{2, 2}, Data: []float32{1, 2, 3, 4}}}), false},
		{"another type, same bytes", cache.KeyOf(1, []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{4}, Data: []int32{1065353216, 1073741824, 1077936128, 1082130432}}}), false},
		{"an input absent", cache.KeyOf(1, append(input(1, 2, 3, 4), nil)), false},
	}
	for _, tt := range tests {
		if got := tt.key == base; got != tt.same {
			t.Errorf("%s: same key %v, want %v", tt.name, got, tt.same)
		}
	}
	if cache.KeyOf(1, str("ab", "c")) == cache.KeyOf(1, str("a", "bc")) {
		t.Error("strings split otherwise share a key")
	}
}

func TestHitMissAndErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		fail     error
		want     []core.CacheStatus
		wantRuns int64
	}{
		{"answers are kept", nil, []core.CacheStatus{core.CacheMiss, core.CacheHit, core.CacheHit}, 1},
		{"errors are not", errors.New("boom"), []core.CacheStatus{core.CacheMiss, core.CacheMiss, core.CacheMiss}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, cache.Options{Size: 1 << 20})
			c.ServeEpoch(1)
			f := &fakeRunner{fail: tt.fail}
			for i, want := range tt.want {
				res, st, err := do(ctx, c, f, input(1, 2))
				if st != want {
					t.Errorf("request %d: status %v, want %v", i, st, want)
				}
				if (err != nil) != (tt.fail != nil) {
					t.Fatalf("request %d: error %v", i, err)
				}
				if err == nil {
					if got := first(t, res); got[0] != 2 || got[1] != 4 {
						t.Errorf("request %d: answer %v", i, got)
					}
				}
			}
			if got := f.runs.Load(); got != tt.wantRuns {
				t.Errorf("%d runs, want %d", got, tt.wantRuns)
			}
		})
	}
}

// TestSingleFlight: identical requests that arrive while the first one
// runs share its run, even when that request gives up during it.
func TestSingleFlight(t *testing.T) {
	tests := []struct {
		name       string
		cancelLead bool
		wantRuns   int64
	}{
		{"one run serves all", false, 1},
		{"a canceled leader does not fail the others", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCache(t, cache.Options{Size: 1 << 20})
				c.ServeEpoch(1)
				f := &fakeRunner{gate: make(chan struct{})}
				leadCtx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var leadErr error
				var wg sync.WaitGroup
				wg.Go(func() { _, _, leadErr = do(leadCtx, c, f, input(3)) })
				synctest.Wait()
				const n = 8
				errs := make([]error, n)
				answers := make([]float32, n)
				for i := range n {
					wg.Go(func() {
						res, _, err := do(context.Background(), c, f, input(3))
						errs[i] = err
						if err == nil {
							answers[i] = first(t, res)[0]
						}
					})
				}
				synctest.Wait()
				if got := f.runs.Load(); got != 1 {
					t.Fatalf("%d runs under way, want 1", got)
				}
				if tt.cancelLead {
					cancel()
					synctest.Wait()
				}
				close(f.gate)
				wg.Wait()
				if tt.cancelLead != (leadErr != nil) {
					t.Errorf("leader's error: %v", leadErr)
				}
				for i := range n {
					if errs[i] != nil || answers[i] != 6 {
						t.Errorf("request %d: %v, %v", i, answers[i], errs[i])
					}
				}
				if got := f.runs.Load(); got != tt.wantRuns {
					t.Errorf("%d runs, want %d", got, tt.wantRuns)
				}
				st := c.Stats()
				if st.Hits != n-uint64(tt.wantRuns-1) || st.Misses != uint64(tt.wantRuns) {
					t.Errorf("stats %+v", st)
				}
			})
		})
	}
}

// TestFollowerGivesUp: a request waiting for an identical one's run ends
// with its own context, and the run goes on for the other.
func TestFollowerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(t, cache.Options{Size: 1 << 20})
		c.ServeEpoch(1)
		f := &fakeRunner{gate: make(chan struct{})}
		var wg sync.WaitGroup
		var leadErr error
		wg.Go(func() { _, _, leadErr = do(context.Background(), c, f, input(3)) })
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _, err := do(ctx, c, f, input(3))
		if !errors.Is(err, core.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("follower: %v, want ErrCanceled wrapping its deadline", err)
		}
		close(f.gate)
		wg.Wait()
		if leadErr != nil {
			t.Errorf("leader: %v", leadErr)
		}
	})
}

func TestServeEmpties(t *testing.T) {
	ctx := context.Background()
	c := newCache(t, cache.Options{Size: 1 << 20})
	c.ServeEpoch(1)
	f := &fakeRunner{}
	_, _, _ = do(ctx, c, f, input(1))
	if st := c.Stats(); st.Entries != 1 || st.Bytes <= 0 {
		t.Fatalf("stats after a run: %+v", st)
	}
	c.ServeEpoch(2)
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("stats after a reload: %+v", st)
	}
	// A run of the generation before, ending after the swap, is not kept.
	if _, st, _ := do(ctx, c, f, input(1)); st != core.CacheMiss || c.Stats().Entries != 0 {
		t.Errorf("an old generation's run: %v, %+v", st, c.Stats())
	}
}

func TestTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newCache(t, cache.Options{Size: 1 << 20, TTL: time.Minute, Now: func() time.Time { return now }})
	c.ServeEpoch(1)
	f := &fakeRunner{}
	ctx := context.Background()
	steps := []struct {
		after time.Duration
		want  core.CacheStatus
	}{{0, core.CacheMiss}, {59 * time.Second, core.CacheHit}, {time.Second, core.CacheMiss}, {30 * time.Second, core.CacheHit}}
	for i, s := range steps {
		now = now.Add(s.after)
		if _, st, _ := do(ctx, c, f, input(1)); st != s.want {
			t.Errorf("step %d: %v, want %v", i, st, s.want)
		}
	}
}

// TestByteBound: under a random workload of requests of random sizes,
// the entries never hold more than the bound, and the figures add up.
func TestByteBound(t *testing.T) {
	for _, size := range []int64{1 << 10, 8 << 10, 32 << 10} {
		c := newCache(t, cache.Options{Size: size})
		c.ServeEpoch(1)
		f := &fakeRunner{}
		rng := rand.New(rand.NewPCG(uint64(size), 7))
		ctx := context.Background()
		var hits, misses uint64
		for range 5000 {
			// 40 requests, each of its own size, some asked more often.
			k := min(rng.IntN(40), rng.IntN(40))
			vals := make([]float32, 1+(k*97)%600)
			vals[0] = float32(k)
			_, st, err := do(ctx, c, f, input(vals...))
			if err != nil {
				t.Fatal(err)
			}
			if st == core.CacheHit {
				hits++
			} else {
				misses++
			}
			if got := c.Stats(); got.Bytes > size || got.Bytes < 0 {
				t.Fatalf("size %d: the entries hold %d bytes", size, got.Bytes)
			}
		}
		st := c.Stats()
		if st.Hits != hits || st.Misses != misses || st.Evictions == 0 || st.Hits == 0 {
			t.Errorf("size %d: stats %+v; counted %d hits, %d misses", size, st, hits, misses)
		}
	}
}
