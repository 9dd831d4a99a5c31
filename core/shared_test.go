package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

// echoPooled is a Runner whose outputs copy its input into storage from the
// tensor pools, as the Predictor's sized outputs are; each Predict waits
// for a token on gate.
type echoPooled struct {
	gate chan struct{}
	// extraRow makes a merged run's output one row longer than its
	// input, which cannot be split among the members.
	extraRow bool
	mu       sync.Mutex
	rows     []int64
	// made is the storage of the last output.
	made *float32
}

// echoCols is the width of echoPooled's rows: 80 KB of float32, pooled.
const echoCols = 20000

func (e *echoPooled) Info() ModelInfo {
	return ModelInfo{
		Inputs:  []InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, echoCols}, Required: true, Kind: KindTensor}},
		Outputs: []OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, echoCols}, Kind: KindTensor}},
	}
}

func (e *echoPooled) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, echoCols}, Required: true}}
}

func (e *echoPooled) Predict(ctx context.Context, in []*tensor.Tensor) (*Result, error) {
	e.mu.Lock()
	e.rows = append(e.rows, in[0].Shape[0])
	e.mu.Unlock()
	select {
	case <-e.gate:
	case <-ctx.Done():
		return nil, ErrCanceled
	}
	x := in[0].Data.([]float32)
	shape := ort.Shape(slices.Clone(in[0].Shape))
	if e.extraRow && shape[0] > 1 {
		shape[0]++
	}
	y := tensor.MakeSlice[float32](int(shape.FlattenedSize()))
	copy(y, x)
	e.mu.Lock()
	e.made = unsafe.SliceData(y)
	e.mu.Unlock()
	v, err := ort.NewTensor(shape, y)
	if err != nil {
		return nil, err
	}
	return &Result{values: []ort.Value{v}, pooled: []bool{true}}, nil
}

func (e *echoPooled) runs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.rows)
}

func rowOf(v float32) *tensor.Tensor {
	d := make([]float32, echoCols)
	for i := range d {
		d[i] = v
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, echoCols}, Data: d}
}

// occupy sends a request that takes b's only slot and waits until e runs
// it; the request's error arrives on the channel once its run is let
// through (its answer is released).
func occupy(t *testing.T, b *Batcher, e *echoPooled) <-chan error {
	t.Helper()
	first := make(chan error, 1)
	go func() {
		res, err := b.Predict(context.Background(), []*tensor.Tensor{rowOf(0)})
		if err == nil {
			res.Release()
		}
		first <- err
	}()
	waitUntil(t, "the first run", func() bool { return e.runs() == 1 })
	return first
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
	}
}

// TestMergedPartsShareStorage merges two requests into one run whose output
// storage is pooled: each member's part views it, and it goes back to the
// pools only when the last part is released. A third member gives up while
// the merged run is under way: it still waits for the run and releases the
// part it was handed, or the storage would never go back.
func TestMergedPartsShareStorage(t *testing.T) {
	for _, giveUp := range []bool{false, true} {
		t.Run(fmt.Sprintf("a member gives up: %v", giveUp), func(t *testing.T) {
			e := &echoPooled{gate: make(chan struct{}, 10)}
			b, err := NewBatcher(e, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
			if err != nil {
				t.Fatal(err)
			}
			// The first request holds the only slot while the others queue.
			first := occupy(t, b, e)

			type answer struct {
				res *Result
				err error
			}
			members := 2
			if giveUp {
				members = 3
			}
			answers := make([]chan answer, members)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := range answers {
				answers[i] = make(chan answer, 1)
				c := context.Background()
				if i == 2 {
					c = ctx
				}
				go func() {
					res, err := b.Predict(c, []*tensor.Tensor{rowOf(float32(i + 1))})
					answers[i] <- answer{res, err}
				}()
				waitUntil(t, "queued", func() bool { return b.Queued() == i+1 })
			}
			e.gate <- struct{}{}
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the merged run", func() bool { return e.runs() == 2 })
			e.mu.Lock()
			merged := e.rows[1]
			e.mu.Unlock()
			if merged != int64(members) {
				t.Fatalf("the merged run has %d rows, want %d", merged, members)
			}
			if giveUp {
				cancel() // taken into the group already: its run goes on
			}
			e.gate <- struct{}{}

			var parts []*Result
			for i := 0; i < 2; i++ {
				a := <-answers[i]
				if a.err != nil {
					t.Fatalf("member %d: %v", i, a.err)
				}
				y, err := a.res.Tensor(0)
				if err != nil {
					t.Fatal(err)
				}
				if got := y.Data.([]float32); len(got) != echoCols || got[0] != float32(i+1) || got[echoCols-1] != float32(i+1) {
					t.Fatalf("member %d got rows of %v", i, got[0])
				}
				parts = append(parts, a.res)
			}
			if giveUp {
				if a := <-answers[2]; !errors.Is(a.err, ErrCanceled) || a.res != nil {
					t.Fatalf("the member that gave up: %v, %v", a.res, a.err)
				}
			}
			shared := parts[0].shared
			if shared == nil || parts[1].shared != shared {
				t.Fatal("the parts do not share the run's storage")
			}
			storage := shared.tensors[0]
			parts[0].Release()
			if storage.Data == nil {
				t.Fatal("the storage went back while a part still viewed it")
			}
			parts[1].Release()
			if storage.Data != nil {
				t.Fatal("the storage did not go back once every part was released")
			}
		})
	}
}

// TestSplitFailureGivesStorageBack: a merged run whose output has more rows
// than the members brought cannot be split; every member gets the error,
// and the run's pooled output storage goes back to the pools (sync.Pool
// may drop what it is given, under the race detector on purpose, so the
// check runs a few times).
func TestSplitFailureGivesStorageBack(t *testing.T) {
	for range 50 {
		e := &echoPooled{gate: make(chan struct{}, 10), extraRow: true}
		b, err := NewBatcher(e, BatchOptions{MaxBatchSize: 8, Slots: 1, Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		first := occupy(t, b, e)
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				res, err := b.Predict(context.Background(), []*tensor.Tensor{rowOf(float32(i + 1))})
				if res != nil {
					t.Errorf("member %d got an answer from a run that could not be split", i)
				}
				errs <- err
			}()
			waitUntil(t, "queued", func() bool { return b.Queued() == i+1 })
		}
		e.gate <- struct{}{}
		e.gate <- struct{}{}
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for range 2 {
			err := <-errs
			var ie *InferenceError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not a batch of 2 rows") {
				t.Fatalf("a member of the run that could not be split: %v", err)
			}
		}
		e.mu.Lock()
		made := e.made
		e.mu.Unlock()
		s := tensor.MakeSlice[float32](3 * echoCols)
		reused := unsafe.SliceData(s) == made
		tensor.PutSlice(s)
		if reused {
			return
		}
	}
	t.Fatal("the output storage of the run that could not be split never went back to the pools")
}

// TestShapeMemo checks the memo's bookkeeping: it stays off until a shape
// is remembered, remembers at most maxShapeKeys combinations, forgets a
// combination that missed (and does not learn it again), and turns off at
// the maxShapeMisses-th miss, once.
func TestShapeMemo(t *testing.T) {
	var m shapeMemo
	key := func(i int) []byte { return []byte(fmt.Sprint(i, ";")) }
	shapes := []ort.Shape{ort.NewShape(1, 2)}
	if m.lookup(key(0)) != nil {
		t.Fatal("an empty memo gave shapes")
	}
	for i := 0; i < maxShapeKeys+10; i++ {
		m.remember(key(i), shapes)
	}
	if !m.active.Load() || m.lookup(key(0)) == nil || m.lookup(key(maxShapeKeys-1)) == nil {
		t.Fatal("remembered shapes are not found")
	}
	if m.lookup(key(maxShapeKeys)) != nil {
		t.Fatalf("more than %d combinations remembered", maxShapeKeys)
	}
	for i := 0; i < maxShapeMisses; i++ {
		off := m.missed(key(i))
		if off != (i == maxShapeMisses-1) {
			t.Fatalf("miss %d turned the memo off: %v", i+1, off)
		}
		m.remember(key(i), shapes)
	}
	if m.missed(key(100)) {
		t.Fatal("a miss after the memo went off reported turning it off again")
	}
	if m.lookup(key(200)) != nil {
		t.Fatal("the memo gave shapes after it went off")
	}
	m.off.Store(false) // look inside: missed keys stay forgotten
	for i := 0; i < maxShapeMisses; i++ {
		if m.lookup(key(i)) != nil {
			t.Fatalf("combination %d was learnt again after its miss", i)
		}
	}
}

// TestLargeShapes: the memo learns the shapes of large numeric outputs only,
// and checking a run whose outputs are all small allocates nothing (it
// follows every run the memo did not size).
func TestLargeShapes(t *testing.T) {
	plan := outputPlan{spec: OutputSpec{Kind: KindTensor}, dtype: tensor.Float32, prealloc: tensor.Invalid}
	small, err := ort.NewTensor(ort.NewShape(2, 8), make([]float32, 16))
	if err != nil {
		t.Fatal(err)
	}
	defer small.Destroy()
	n := tensor.MinPooled / 4
	large, err := ort.NewTensor(ort.NewShape(1, int64(n)), make([]float32, n))
	if err != nil {
		t.Fatal(err)
	}
	defer large.Destroy()
	plans := []outputPlan{plan, plan}
	if got := largeShapes(plans, []ort.Value{small, small}); got != nil {
		t.Fatalf("shapes %v for small outputs, want none", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { largeShapes(plans, []ort.Value{small, small}) }); allocs != 0 {
		t.Errorf("%v allocations to check small outputs, want 0", allocs)
	}
	got := largeShapes(plans, []ort.Value{small, large})
	if len(got) != 2 || got[0] != nil || !slices.Equal(got[1], ort.NewShape(1, int64(n))) {
		t.Fatalf("shapes %v, want only the large output's", got)
	}
}
