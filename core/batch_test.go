package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

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

// concurrently sends bodies at once and returns the answers in order.
func concurrently(t *testing.T, r core.Runner, bodies []string) []string {
	t.Helper()
	out := make([]string, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = run(context.Background(), r, b)
		}()
	}
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
		// Merged runs large enough for the tensor pools (3 or more
		// requests): merged inputs and outputs sized from earlier runs
		// reuse storage, and the answers must not mix.
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
			const n = 24
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
			pool, err := core.NewPool(p)
			if err != nil {
				t.Fatal(err)
			}
			if tt.maxBatch == 0 {
				tt.maxBatch = 8
			}
			b, err := core.NewBatcher(pool, core.BatchOptions{MaxBatchSize: tt.maxBatch, Slots: 1, Fixed: true})
			if err != nil {
				t.Fatal(err)
			}
			// Repeat until merges happened (they need requests to arrive
			// while a run is under way).
			for round := 0; round < 20 && b.Stats().MergedRuns == 0; round++ {
				got := concurrently(t, b, bodies)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("request %d batched:\n%s\nalone:\n%s", i, got[i], want[i])
					}
				}
			}
			st := b.Stats()
			t.Logf("%+v", st)
			if st.MergedRuns == 0 {
				t.Fatal("no run was merged")
			}
		})
	}
}

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

func TestBatcherIdleRunsAtOnce(t *testing.T) {
	p := newPredictor(t, model("classifier.onnx"), config.Runtime{})
	pool, _ := core.NewPool(p)
	b, err := core.NewBatcher(pool, core.BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := run(context.Background(), b, `{"input": [[1, 2, 3, 4]]}`); err != nil {
			t.Fatal(err)
		}
	}
	if st := b.Stats(); st.Runs != 20 || st.MergedRuns != 0 {
		t.Fatalf("sequential requests: %+v", st)
	}
}

// fakeRunner is a scripted model for the batcher's failure paths.
type fakeRunner struct {
	info    core.ModelInfo
	specs   []tensor.Spec
	gate    chan struct{} // each Predict waits for a token
	fail    error
	mu      sync.Mutex
	batches []int64
}

func newFake() *fakeRunner {
	return &fakeRunner{
		info: core.ModelInfo{
			Inputs:  []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 2}, Required: true, Kind: core.KindTensor}},
			Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor}},
		},
		specs: []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 2}, Required: true}},
		gate:  make(chan struct{}, 100),
	}
}

func (f *fakeRunner) Info() core.ModelInfo { return f.info }
func (f *fakeRunner) Specs() []tensor.Spec { return f.specs }
func (f *fakeRunner) Predict(ctx context.Context, in []*tensor.Tensor) (*core.Result, error) {
	f.mu.Lock()
	f.batches = append(f.batches, in[0].Shape[0])
	f.mu.Unlock()
	select {
	case <-f.gate:
	case <-ctx.Done():
		return nil, core.ErrCanceled
	}
	if f.fail != nil {
		return nil, f.fail
	}
	return nil, errors.New("fake runs cannot produce results")
}

func TestBatcherErrorsReachEveryMember(t *testing.T) {
	f := newFake()
	f.fail = &core.InferenceError{Err: errors.New("boom")}
	b, err := core.NewBatcher(f, core.BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		go func() {
			_, err := run(context.Background(), b, `{"x": [[1, 2]]}`)
			errs <- err
		}()
		if i == 0 {
			waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.batches) == 1 })
		}
	}
	waitFor(t, func() bool { return queued(b) == 4 })
	f.gate <- struct{}{} // first run (alone) fails
	f.gate <- struct{}{} // the merged run of the other four fails
	for i := 0; i < 5; i++ {
		err := <-errs
		var ie *core.InferenceError
		if !errors.As(err, &ie) || ie.Error() != "Inference failed: boom" {
			t.Fatalf("member error = %v", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.batches) != "[1 4]" {
		t.Fatalf("runs = %v, want [1 4]", f.batches)
	}
}

func TestBatcherCanceledWhileQueued(t *testing.T) {
	f := newFake()
	f.fail = &core.InferenceError{Err: errors.New("done")}
	b, _ := core.NewBatcher(f, core.BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
	first := make(chan error, 1)
	go func() { _, err := run(context.Background(), b, `{"x": [[1, 2]]}`); first <- err }()
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.batches) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { _, err := run(ctx, b, `{"x": [[3, 4]]}`); second <- err }()
	waitFor(t, func() bool { return queued(b) == 1 })
	cancel()
	if err := <-second; !errors.Is(err, core.ErrCanceled) {
		t.Fatalf("canceled member: %v", err)
	}
	if queued(b) != 0 {
		t.Fatal("canceled request still queued")
	}
	f.gate <- struct{}{}
	<-first
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.batches) != 1 {
		t.Fatalf("the canceled request ran: %v", f.batches)
	}
}

func TestBatcherMaxQueueDelayMerges(t *testing.T) {
	f := newFake()
	f.fail = &core.InferenceError{Err: errors.New("done")}
	for i := 0; i < 10; i++ {
		f.gate <- struct{}{}
	}
	b, _ := core.NewBatcher(f, core.BatchOptions{MaxBatchSize: 8, MaxQueueDelay: 200 * time.Millisecond, Slots: 1, Fixed: true})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = run(context.Background(), b, `{"x": [[1, 2]]}`) }()
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.batches) != "[3]" {
		t.Fatalf("runs = %v, want one merged run of 3 (the delay gathers them)", f.batches)
	}
}

func queued(b *core.Batcher) int { return b.Queued() }

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

func TestBatcherSharesTheQueueBetweenSlots(t *testing.T) {
	f := newFake()
	f.fail = &core.InferenceError{Err: errors.New("done")}
	b, _ := core.NewBatcher(f, core.BatchOptions{MaxBatchSize: 8, Slots: 2, Fixed: true})
	errs := make(chan error, 10)
	send := func() {
		go func() { _, err := run(context.Background(), b, `{"x": [[1, 2]]}`); errs <- err }()
	}
	// Two requests take both slots; eight more queue behind them.
	send()
	send()
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.batches) == 2 })
	for i := 0; i < 8; i++ {
		send()
	}
	waitFor(t, func() bool { return queued(b) == 8 })
	// A slot frees: it takes half of the queue, not all of it, so that the
	// other slot has work when it frees.
	f.gate <- struct{}{}
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.batches) == 3 })
	f.mu.Lock()
	third := f.batches[2]
	f.mu.Unlock()
	if third != 4 {
		t.Fatalf("the first merged run took %d rows of 8 queued with 2 slots, want 4", third)
	}
	for i := 0; i < 10; i++ {
		f.gate <- struct{}{}
	}
	for i := 0; i < 10; i++ {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "done") {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var rows int64
	for _, n := range f.batches {
		rows += n
	}
	if rows != 10 {
		t.Fatalf("runs %v cover %d rows, want 10", f.batches, rows)
	}
}

// TestBatcherLimitStartsSmallWhenAdaptive: an adaptive batcher starts
// settled on one row (probing two at once); a fixed one merges up to
// MaxBatchSize.
func TestBatcherLimitStartsSmallWhenAdaptive(t *testing.T) {
	f := newFake()
	for _, tt := range []struct {
		opts core.BatchOptions
		want int
	}{
		{core.BatchOptions{MaxBatchSize: 8, Slots: 1}, 1},
		{core.BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true}, 8},
		{core.BatchOptions{MaxBatchSize: 1, Slots: 1}, 1},
	} {
		b, err := core.NewBatcher(f, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Stats().Limit; got != tt.want {
			t.Errorf("%+v: limit %d, want %d", tt.opts, got, tt.want)
		}
	}
}
