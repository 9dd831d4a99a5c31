package session

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// The output planner's strategies, each driven by hand: a try is allocated,
// then reported as run (succeeded) or failed with the error ONNX Runtime or
// the Go binding would give, with the outputs the binding would leave.

// allocsGCOff is testing.AllocsPerRun with the garbage collector off: a
// collection during the runs would count what the runtime's own cleanups
// allocate (the tensor pools trim themselves after each one).
func allocsGCOff(runs int, f func()) float64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	return testing.AllocsPerRun(runs, f)
}

// poolRows is the number of float32 rows of cols elements in MinPooled bytes:
// a tensor of this many rows is just large enough to be pooled.
const cols = 1024

var poolRows = int64(tensor.MinPooled / (4 * cols))

func floatIn(rows int64) []*tensor.Tensor {
	return []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{rows, cols}, Data: make([]float32, rows*cols)}}
}

var namedInput = []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, cols}, DimNames: []string{"n", ""}, Kind: core.KindTensor}}

// errBinding is the error a run gets when the Go binding cannot convert
// an output ONNX Runtime allocated; it leaves a typed nil in its place.
var errBinding = errors.New("the binding cannot convert a rank-0 value")

// errRefused is the error of a run that ONNX Runtime refused.
var errRefused = &core.InferenceError{Err: errors.New("output shape mismatch")}

// typedNil is what the binding leaves for an output it failed to convert.
func typedNil() ort.Value { return (*ort.Tensor[float32])(nil) }

func newTestOutputs(t *testing.T, outs ...core.OutputSpec) (*outputs, *observer.ObservedLogs) {
	t.Helper()
	obs, logs := observer.New(zap.InfoLevel)
	return newOutputs(namedInput, outs, zap.New(obs)), logs
}

// try allocates a's next try and fails the test on error.
func try(t *testing.T, o *outputs, a *attempt, in []*tensor.Tensor) []ort.Value {
	t.Helper()
	out, err := o.alloc(a, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOutputsRankZero(t *testing.T) {
	t.Run("declared rank 0 is allocated as a scalar", func(t *testing.T) {
		o, _ := newTestOutputs(t,
			core.OutputSpec{Name: "f", Type: "float32", Shape: []int64{}, Kind: core.KindTensor},
			core.OutputSpec{Name: "h", Type: "float16", Shape: []int64{}, Kind: core.KindTensor},
			core.OutputSpec{Name: "s", Type: "string", Shape: []int64{}, Kind: core.KindTensor})
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(1))
		defer destroyValues(out)
		if _, ok := out[0].(*ort.Scalar[float32]); !ok {
			t.Fatalf("float32 rank 0: %T, want a scalar", out[0])
		}
		if v, ok := out[1].(*ort.CustomDataTensor); !ok || len(v.GetShape()) != 1 {
			t.Fatalf("float16 rank 0: %T, want a [1] tensor", out[1])
		}
		if out[2] != nil {
			t.Fatalf("string rank 0: %T, want it left to ONNX Runtime", out[2])
		}
		if !slices.Equal(o.rank0, []bool{true, true, true}) {
			t.Fatalf("rank0 = %v", o.rank0)
		}
	})
	t.Run("an unknown shape that came back rank 0 is learnt, then unlearnt", func(t *testing.T) {
		o, _ := newTestOutputs(t, core.OutputSpec{Name: "y", Type: "float32", Kind: core.KindTensor})
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(1))
		if out[0] != nil {
			t.Fatalf("first try: %T allocated, want it left to ONNX Runtime", out[0])
		}
		out[0] = typedNil()
		if err := o.failed(&a, out, errBinding); err != nil {
			t.Fatalf("a rank-0 output the binding could not convert: %v, want a retry", err)
		}
		out = try(t, o, &a, floatIn(1))
		if _, ok := out[0].(*ort.Scalar[float32]); !ok {
			t.Fatalf("the retry: %T, want a scalar", out[0])
		}
		o.succeeded(&a, nil, nil, floatIn(1), out)
		destroyValues(out)

		// Learnt: the next run allocates the scalar at once.
		var b attempt
		o.begin(&b, nil)
		out = try(t, o, &b, floatIn(1))
		if _, ok := out[0].(*ort.Scalar[float32]); !ok {
			t.Fatalf("a later run: %T, want the learnt scalar", out[0])
		}
		// For these inputs it is not rank 0: ONNX Runtime refuses the
		// scalar, and the run goes on without what was learnt.
		if err := o.failed(&b, out, errRefused); err != nil {
			t.Fatalf("a learnt scalar refused: %v, want a retry", err)
		}
		out = try(t, o, &b, floatIn(1))
		if out[0] != nil {
			t.Fatalf("after unlearning: %T, want it left to ONNX Runtime", out[0])
		}
		destroyValues(out)
		if o.scalarSeen[0].Load() {
			t.Fatal("still learnt")
		}
	})
	t.Run("a scalar that still fails is the run's error", func(t *testing.T) {
		o, _ := newTestOutputs(t, core.OutputSpec{Name: "y", Type: "float32", Kind: core.KindTensor})
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(1))
		out[0] = typedNil()
		if err := o.failed(&a, out, errBinding); err != nil {
			t.Fatal(err)
		}
		out = try(t, o, &a, floatIn(1))
		destroyValues(out)
		out[0] = typedNil()
		err := o.failed(&a, out, errBinding)
		var ie *core.InferenceError
		if !errors.As(err, &ie) || err.Error() != "Inference failed: output 'y': the binding cannot convert a rank-0 value" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("other failures are the run's error", func(t *testing.T) {
		o, _ := newTestOutputs(t, core.OutputSpec{Name: "y", Type: "float32", Shape: []int64{-1, cols}, Kind: core.KindTensor})
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(1))
		if err := o.failed(&a, out, errRefused); err != errRefused {
			t.Fatalf("err = %v, want the run's own", err)
		}
	})
}

func TestOutputsPooledByName(t *testing.T) {
	spec := core.OutputSpec{Name: "y", Type: "float32", Shape: []int64{-1, cols}, DimNames: []string{"n", ""}, Kind: core.KindTensor}
	t.Run("large outputs sized from the inputs, small ones left", func(t *testing.T) {
		o, _ := newTestOutputs(t, spec)
		if !o.plans[0].pooled {
			t.Fatal("an output named after the inputs' dimensions is not planned pooled")
		}
		for _, tt := range []struct {
			rows   int64
			pooled bool
		}{{poolRows, true}, {poolRows - 1, false}, {3 * poolRows, true}} {
			var a attempt
			o.begin(&a, nil)
			out := try(t, o, &a, floatIn(tt.rows))
			if got := out[0] != nil; got != tt.pooled || (a.pooledAt != nil) != tt.pooled {
				t.Fatalf("%d rows: allocated %v (pooledAt %v), want %v", tt.rows, got, a.pooledAt, tt.pooled)
			}
			if tt.pooled && !slices.Equal(out[0].GetShape(), ort.NewShape(tt.rows, cols)) {
				t.Fatalf("%d rows: shape %v", tt.rows, out[0].GetShape())
			}
			destroyValues(out)
		}
	})
	t.Run("names that do not tell the shape are distrusted", func(t *testing.T) {
		o, logs := newTestOutputs(t, spec)
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(poolRows))
		if err := o.failed(&a, out, errRefused); err != nil {
			t.Fatalf("a sized output refused: %v, want a retry", err)
		}
		out = try(t, o, &a, floatIn(poolRows))
		if out[0] != nil || a.pooledAt != nil {
			t.Fatal("the retry sized the output again")
		}
		o.succeeded(&a, nil, nil, floatIn(poolRows), out)
		destroyValues(out)
		if !o.noPool.Load() || logs.FilterMessageSnippet("outputs cannot be allocated before the run").Len() != 1 {
			t.Fatalf("not distrusted: noPool %v, logs %v", o.noPool.Load(), logs.All())
		}
		var b attempt
		o.begin(&b, nil)
		if b.byName {
			t.Fatal("a later run sizes by name again")
		}
	})
	t.Run("a retry that fails too is the run's error", func(t *testing.T) {
		o, _ := newTestOutputs(t, spec)
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(poolRows))
		if err := o.failed(&a, out, errRefused); err != nil {
			t.Fatal(err)
		}
		out = try(t, o, &a, floatIn(poolRows))
		if err := o.failed(&a, out, errRefused); err != errRefused {
			t.Fatalf("err = %v", err)
		}
		if o.noPool.Load() {
			t.Fatal("distrusted without a run that succeeded")
		}
	})
	t.Run("float16 is sized from the names, or refused", func(t *testing.T) {
		half := spec
		half.Type = "float16"
		unnamed := half
		unnamed.Name, unnamed.DimNames = "z", nil
		o, _ := newTestOutputs(t, half)
		var a attempt
		o.begin(&a, nil)
		out := try(t, o, &a, floatIn(2))
		if v, ok := out[0].(*ort.CustomDataTensor); !ok || !slices.Equal(v.GetShape(), ort.NewShape(2, cols)) {
			t.Fatalf("float16 output: %T", out[0])
		}
		destroyValues(out)
		o, _ = newTestOutputs(t, unnamed)
		var b attempt
		o.begin(&b, nil)
		if _, err := o.alloc(&b, floatIn(2)); err == nil || err.Error() != "output 'z' is float16 with a dynamic shape svc cannot size before the run" {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOutputsShapeMemo(t *testing.T) {
	// No dimension names: only the memo can size it.
	spec := core.OutputSpec{Name: "y", Type: "float32", Shape: []int64{-1, -1}, Kind: core.KindTensor}
	large := func(t *testing.T, rows int64) ort.Value {
		t.Helper()
		v, err := ort.NewTensor(ort.NewShape(rows, cols), make([]float32, rows*cols))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var buf [64]byte
	in := floatIn(2)
	o, logs := newTestOutputs(t, spec)
	if o.memoKey(buf[:0], in) != nil {
		t.Fatal("a key before the memo is in use")
	}
	// A run ONNX Runtime sized teaches the memo the output's shape.
	var a attempt
	o.begin(&a, nil)
	out := try(t, o, &a, in)
	if out[0] != nil {
		t.Fatal("sized before the memo knew the shape")
	}
	out[0] = large(t, poolRows)
	o.succeeded(&a, nil, buf[:0], in, out)
	destroyValues(out)

	// The next run with the same input shapes finds it sized.
	key := o.memoKey(buf[:0], in)
	if string(key) != fmt.Sprintf("2,%d,;", cols) {
		t.Fatalf("key %q", key)
	}
	var b attempt
	o.begin(&b, key)
	out = try(t, o, &b, in)
	if out[0] == nil || b.pooledAt == nil || !slices.Equal(out[0].GetShape(), ort.NewShape(poolRows, cols)) {
		t.Fatalf("the memo did not size the output: %v", out[0])
	}
	// Not that shape this time: the run goes on without the memo, and the
	// memo forgets those input shapes.
	if err := o.failed(&b, out, errRefused); err != nil {
		t.Fatal(err)
	}
	out = try(t, o, &b, in)
	if out[0] != nil {
		t.Fatal("the retry used the memo again")
	}
	out[0] = large(t, poolRows+1)
	o.succeeded(&b, key, buf[:0], in, out)
	destroyValues(out)
	if o.memo.lookup(key) != nil {
		t.Fatal("the memo still sizes input shapes that missed")
	}
	if logs.FilterMessageSnippet("output shapes vary").Len() != 0 {
		t.Fatal("the memo turned off after one miss")
	}
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
	plan := outputPlan{spec: core.OutputSpec{Kind: core.KindTensor}, dtype: tensor.Float32, prealloc: tensor.Invalid}
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
	if allocs := allocsGCOff(100, func() { largeShapes(plans, []ort.Value{small, small}) }); allocs != 0 {
		t.Errorf("%v allocations to check small outputs, want 0", allocs)
	}
	got := largeShapes(plans, []ort.Value{small, large})
	if len(got) != 2 || got[0] != nil || !slices.Equal(got[1], ort.NewShape(1, int64(n))) {
		t.Fatalf("shapes %v, want only the large output's", got)
	}
}
