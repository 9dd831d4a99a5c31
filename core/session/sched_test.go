package session_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/cpu"
)

// Sessions behind the scheduler, on real models: what the scheduler's own
// tests show on fakes, shown again where ONNX Runtime computes.

// gated holds each run of a session until the test lets it through, so
// that requests sent meanwhile queue in the batcher and merge.
type gated struct {
	*session.Predictor
	gate chan struct{}
	mu   sync.Mutex
	runs int
}

func (g *gated) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	g.mu.Lock()
	g.runs++
	g.mu.Unlock()
	<-g.gate
	return g.Predictor.Predict(ctx, in)
}

func (g *gated) started() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runs
}

// run decodes and predicts through r, returning the JSON answer.
func run(ctx context.Context, r core.Runner, body string) (string, error) {
	in, err := decodeRequest([]byte(body), r.Specs())
	if err != nil {
		return "", err
	}
	res, err := r.Predict(ctx, in)
	if err != nil {
		return "", err
	}
	// As the servers do: storage goes back to the tensor pools once the
	// answer is encoded.
	defer tensor.RecycleAll(in)
	defer res.Release()
	return resultJSON(r, res)
}

// mergeAll sends bodies to a batcher with one slot in front of g: the
// first runs alone while the others queue, then every run is let through.
// It returns the answers in order. It runs in a synctest bubble, where g
// and b were made, so that synctest.Wait tells when a request has got as
// far as it can.
func mergeAll(t *testing.T, g *gated, b *sched.Batcher, bodies []string) []string {
	t.Helper()
	out := make([]string, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = run(context.Background(), b, body)
		}()
		// Once it is blocked, the request runs (the first) or waits in
		// the queue (the others).
		synctest.Wait()
		if i == 0 {
			if n := g.started(); n != 1 {
				t.Fatalf("the first request: %d runs started, want 1", n)
			}
		} else if q := b.Queued(); q != i {
			t.Fatalf("request %d: %d queued, want %d", i, q, i)
		}
	}
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

func TestBatchingIsBitExact(t *testing.T) {
	tests := []struct {
		model string
		body  func(i int) string
		// maxBatch is the most rows of a merged run (0: 8).
		maxBatch int
	}{
		{"classifier.onnx", func(i int) string {
			return fmt.Sprintf(`{"input": [[%d.%d, 3.%d, %d.25, 0.%d]]}`, i%7, i, i%10, i%6, i%9)
		}, 0},
		{"multi_input.onnx", func(i int) string {
			if i%3 == 0 { // a request with two rows among single rows
				return fmt.Sprintf(`{"features": [[%d, 1, 2], [3, %d, 5]], "ids": [[%d, 1], [2, 3]], "mask": [[true, false], [false, true]], "text": ["a%d", "b"]}`, i, i, i, i)
			}
			return fmt.Sprintf(`{"features": [[%d.5, -1, 2]], "ids": [[%d, -7]], "mask": [[%v, true]], "text": ["word %d"]}`, i, i, i%2 == 0, i)
		}, 0},
		{"float16.onnx", func(i int) string { return fmt.Sprintf(`{"x": [[%d, 0.5, -%d.25, 3]]}`, i, i) }, 0},
		{"slow.onnx", func(i int) string {
			return `{"x": [[` + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("0.0%d,", i%10), 256), ",") + `]]}`
		}, 0},
		// Merged runs large enough for the tensor pools: merged inputs
		// and outputs sized from earlier runs reuse storage, and the
		// answers must not mix.
		{"classifier.onnx", func(i int) string {
			var sb strings.Builder
			sb.WriteString(`{"input": [`)
			for r := 0; r < 1500; r++ {
				if r > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "[%d.5, 1, %d, %d.25]", (r+i)%7, (r*i)%5, r%3)
			}
			sb.WriteString(`]}`)
			return sb.String()
		}, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p := newPredictor(t, model(tt.model), config.Runtime{})
			const n = 12
			bodies := make([]string, n)
			want := make([]string, n)
			for i := range bodies {
				bodies[i] = tt.body(i)
				w, err := run(context.Background(), p, bodies[i])
				if err != nil {
					t.Fatal(err)
				}
				want[i] = w
			}
			if tt.maxBatch == 0 {
				tt.maxBatch = 8
			}
			// Twice: the second round finds storage the first gave back.
			for round := range 2 {
				synctest.Test(t, func(t *testing.T) {
					g := &gated{Predictor: p, gate: make(chan struct{})}
					b, err := sched.NewBatcher(g, sched.BatchOptions{MaxBatchSize: tt.maxBatch, Slots: 1, Fixed: true})
					if err != nil {
						t.Fatal(err)
					}
					got := mergeAll(t, g, b, bodies)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("round %d, request %d batched:\n%s\nalone:\n%s", round, i, got[i], want[i])
						}
					}
					if st := b.Stats(); st.MergedRuns == 0 {
						t.Fatalf("no run was merged: %+v", st)
					}
				})
			}
		})
	}
}

// TestBatchableModels: which test models the batcher can merge requests
// for, as the sessions describe them.
func TestBatchableModels(t *testing.T) {
	tests := []struct {
		model string
		want  string // "" = batchable
	}{
		{"classifier.onnx", ""},
		{"multi_input.onnx", ""},
		{"alltypes.onnx", `inputs disagree on the batch dimension ("n_f64" and "n_i8")`},
		{"zipmap.onnx", `output "probabilities" has no dynamic batch dimension`},
		{"scalar.onnx", `input "x" has no dynamic batch dimension`},
		{"fixed_shape.onnx", `input "image" has no dynamic batch dimension`},
		{"failing.onnx", `output "y" has no dynamic batch dimension`},
	}
	for _, tt := range tests {
		p := newPredictor(t, model(tt.model), config.Runtime{})
		err := core.Batchable(p.Info())
		if (err == nil) != (tt.want == "") || (err != nil && err.Error() != tt.want) {
			t.Errorf("%s: Batchable = %v, want %q", tt.model, err, tt.want)
		}
	}
}

// recorder is a RunObserver that keeps what it is told.
type recorder struct {
	core.NopObserver
	mu         sync.Mutex
	queued     []time.Duration
	executions int
	inferences int
}

func (r *recorder) Queued(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queued = append(r.queued, d)
}

func (r *recorder) Executed(n int, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.executions++
	r.inferences += n
}

// TestObserverCountsRuns sends requests of several rows through a pool
// alone and through a batcher: every request is reported queued once, every
// execution once, and the inferences add up to the rows sent.
func TestObserverCountsRuns(t *testing.T) {
	const n = 12
	bodies := make([]string, n)
	rows := 0
	for i := range bodies {
		if i%4 == 0 {
			bodies[i] = `{"input": [[1, 2, 3, 4], [5, 6, 7, 8], [0, 0, 0, 1]]}`
			rows += 3
		} else {
			bodies[i] = fmt.Sprintf(`{"input": [[%d, 1, 2, 3]]}`, i)
			rows++
		}
	}
	for _, batching := range []bool{false, true} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			rec := &recorder{}
			p, err := session.New(session.Options{Name: "m", File: model("classifier.onnx"), Observer: rec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			wantExec := n
			if batching {
				// mergeAll waits with synctest.Wait: the gate, the pool
				// and the batcher are made in its bubble.
				synctest.Test(t, func(t *testing.T) {
					g := &gated{Predictor: p, gate: make(chan struct{})}
					pool, err := sched.NewPool(g)
					if err != nil {
						t.Fatal(err)
					}
					b, err := sched.NewBatcher(pool, sched.BatchOptions{MaxBatchSize: 8, Slots: 1, Observer: rec, Fixed: true})
					if err != nil {
						t.Fatal(err)
					}
					mergeAll(t, g, b, bodies)
					wantExec = int(b.Stats().Runs)
					if b.Stats().MergedRuns == 0 {
						t.Fatal("no run was merged")
					}
				})
			} else {
				g := &gated{Predictor: p, gate: make(chan struct{})}
				pool, err := sched.NewPool(g)
				if err != nil {
					t.Fatal(err)
				}
				pool.SetObserver(rec)
				close(g.gate)
				for _, body := range bodies {
					if _, err := run(context.Background(), pool, body); err != nil {
						t.Fatal(err)
					}
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.queued) != n {
				t.Errorf("queued reported %d times, want %d", len(rec.queued), n)
			}
			if rec.inferences != rows {
				t.Errorf("inferences = %d, want %d", rec.inferences, rows)
			}
			if rec.executions != wantExec {
				t.Errorf("executions = %d, want %d", rec.executions, wantExec)
			}
			if !batching {
				for _, d := range rec.queued {
					if d != 0 {
						t.Fatalf("an unbounded pool reported a wait of %s", d)
					}
				}
			}
		})
	}
}

// TestOpener: sessions opened for the scheduler carry the source's
// description, the CPU provider's placement is known without a probe, and
// the scheduler opens its sessions through it.
func TestOpener(t *testing.T) {
	src := core.Source{Name: "iris", File: model("classifier.onnx"), Version: "7", Description: "flowers",
		Metadata: map[string]string{"team": "ml"}, Labels: map[string][]string{"label": {"a", "b", "c"}}}
	cpuProvider := cpu.New()
	o := session.NewOpener(src, config.Runtime{IntraOpThreads: 1}, config.Providers{},
		providers.Choice{Provider: cpuProvider}, providers.Set{cpuProvider}, nil, nil)
	s, err := o.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := s.Info()
	if info.Name != "iris" || info.Version != "7" || info.Metadata["description"] != "flowers" || info.Metadata["team"] != "ml" {
		t.Fatalf("info %+v", info)
	}
	pl, err := o.Placement(s.Provider())
	if err != nil || pl.String() != "all on CPUExecutionProvider" {
		t.Fatalf("placement %v, %v", pl, err)
	}
	sc, err := sched.New(sched.Config{Sessions: 2, Slots: 2}, nil, nil, nil).Schedule(o)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if got, err := run(context.Background(), sc, `{"input": [[1, 2, 3, 4]]}`); err != nil || !strings.HasPrefix(got, `{"probabilities":[[`) {
		t.Fatalf("%s, %v", got, err)
	}
}
