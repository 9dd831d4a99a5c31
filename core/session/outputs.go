package session

import (
	"errors"
	"fmt"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// outputs plans how a model's outputs are allocated before each run, and
// learns from the runs. ONNX Runtime can allocate every output itself, but
// three kinds of output are better allocated by svc, each by a strategy of
// its own:
//
//   - rank 0: the Go binding cannot wrap a rank-0 value ONNX Runtime
//     allocated, so outputs declared rank 0 get a scalar up front, and an
//     output of unknown shape that comes back rank 0 (the run then fails in
//     the binding's conversion) is learnt as a scalar: the run is repeated
//     with it pre-allocated, and later runs pre-allocate it at once;
//   - pooled by name: a large numeric output whose every dynamic dimension
//     names an input dimension is sized from the inputs and allocated from
//     the tensor pools, so ONNX Runtime writes into memory the next request
//     reuses instead of into its arena, out of which the binding would copy
//     it;
//   - the shape memo: a large output whose names do not tell its shape is
//     sized from what earlier runs with the same input shapes gave (see
//     shapeMemo).
//
// Each strategy can be wrong for a model (a learnt scalar that is not rank
// 0 for every input, dimension names that do not tell the shape, shapes
// that vary between runs with the same inputs): a run that fails with it is
// repeated once without it, and if that succeeds, the strategy is not
// trusted again for the model (the memo: for those input shapes). float16
// and bfloat16 outputs are always pre-allocated, sized from the inputs'
// dimension names: the binding loses bytes of the ones ONNX Runtime
// allocates.
//
// An outputs is safe for concurrent use; each run goes through it with an
// attempt of its own.
type outputs struct {
	plans []outputPlan
	// rank0 marks the outputs declared rank 0 (for Result).
	rank0 []bool
	// scalarSeen marks outputs of unknown shape that came back rank 0:
	// they are pre-allocated as scalars from then on.
	scalarSeen []atomic.Bool
	// noPool is set once a run failed with outputs sized by name and
	// succeeded without them: ONNX Runtime allocates those from then on.
	noPool atomic.Bool
	memo   shapeMemo
	log    *zap.Logger
}

// outputPlan says how to allocate an output before a run.
type outputPlan struct {
	spec core.OutputSpec
	// prealloc is set for float16/bfloat16 outputs: they are allocated up
	// front so their bytes come back intact.
	prealloc tensor.DType
	// dimFrom maps each dynamic dimension to an input dimension with the
	// same symbolic name: {input index, axis}, or {-1, -1} when unknown.
	dimFrom [][2]int
	// dtype is the element type of a tensor output (Invalid otherwise).
	dtype tensor.DType
	// rank0 is set for outputs declared with an empty shape.
	rank0 bool
	// pooled is set for numeric outputs (other than float16/bfloat16)
	// whose every dynamic dimension names an input's: a large one is
	// sized from the inputs and allocated from the tensor pools.
	pooled bool
}

// newOutputs plans the model's outputs from its description.
func newOutputs(inputs []core.InputSpec, specs []core.OutputSpec, log *zap.Logger) *outputs {
	o := &outputs{plans: make([]outputPlan, len(specs)), log: log}
	for i, spec := range specs {
		o.plans[i] = planOutput(inputs, spec)
	}
	o.scalarSeen = make([]atomic.Bool, len(o.plans))
	o.rank0 = make([]bool, len(o.plans))
	for i, p := range o.plans {
		o.rank0[i] = p.rank0
	}
	return o
}

// planOutput works out how to allocate one output before a run.
func planOutput(inputs []core.InputSpec, spec core.OutputSpec) outputPlan {
	plan := outputPlan{spec: spec}
	if spec.Kind != core.KindTensor {
		return plan
	}
	plan.dtype, _ = tensor.ParseDType(spec.Type)
	if spec.Shape != nil && len(spec.Shape) == 0 {
		plan.rank0 = true
		return plan
	}
	if plan.dtype == tensor.String || !plan.dtype.Valid() || spec.Shape == nil {
		return plan
	}
	dimFrom, known := dimSources(inputs, spec)
	switch plan.dtype {
	case tensor.Float16, tensor.BFloat16:
		plan.prealloc = plan.dtype
		plan.dimFrom = dimFrom
	default:
		if known {
			plan.pooled = true
			plan.dimFrom = dimFrom
		}
	}
	return plan
}

// dimSources maps each dynamic dimension of output o to an input dimension
// of the same symbolic name ({input index, axis}, {-1, -1} when there is
// none); known says every dynamic dimension has one.
func dimSources(inputs []core.InputSpec, o core.OutputSpec) (from [][2]int, known bool) {
	from = make([][2]int, len(o.Shape))
	known = true
	for axis, d := range o.Shape {
		from[axis] = [2]int{-1, -1}
		if d >= 0 {
			continue
		}
		if axis < len(o.DimNames) && o.DimNames[axis] != "" {
			for j, in := range inputs {
				for k, name := range in.DimNames {
					if name == o.DimNames[axis] {
						from[axis] = [2]int{j, k}
					}
				}
			}
		}
		known = known && from[axis][0] >= 0
	}
	return from, known
}

// attempt is one run's way through the strategies: how its next try
// allocates, and what its tries so far have shown. It lives on the
// running goroutine's stack; the memo's key for the inputs' shapes is kept
// beside it, not in it (what the methods store in an attempt escapes to the
// heap, and the key is built in a buffer on the stack).
type attempt struct {
	// scalarAt marks the outputs pre-allocated as scalars (nil: none);
	// learnt says some were learnt from earlier runs.
	scalarAt []bool
	learnt   bool
	// byName sizes outputs from the inputs' dimension names.
	byName bool
	// memo holds the shapes the memo remembered for the inputs' shapes
	// (nil: none).
	memo []ort.Shape
	// pooledAt marks the outputs of this try in storage from the tensor
	// pools (nil: none).
	pooledAt []bool
	// retried holds the error of a try with pooled outputs that was
	// repeated without them, and how that try had sized them.
	retried                    error
	retriedByName, retriedMemo bool
}

// memoKey is the memo's key for the inputs' shapes, built in buf (the memo
// copies what it keeps, so a run whose shapes fit allocates nothing for
// it), or nil while the memo is not in use.
func (o *outputs) memoKey(buf []byte, inputs []*tensor.Tensor) []byte {
	if !o.memo.active.Load() {
		return nil
	}
	return shapesKey(buf, inputs)
}

// begin sets a up for a run's first try; key is the inputs' memoKey.
func (o *outputs) begin(a *attempt, key []byte) {
	// scalarAt stays nil (no allocation per run) until an output has been
	// learnt to be a scalar.
	for i := range o.scalarSeen {
		if o.scalarSeen[i].Load() {
			if a.scalarAt == nil {
				a.scalarAt = make([]bool, len(o.plans))
			}
			a.scalarAt[i], a.learnt = true, true
		}
	}
	a.byName = !o.noPool.Load()
	if key != nil {
		a.memo = o.memo.lookup(key)
	}
}

// succeeded learns from a try that ran: a strategy that failed an earlier
// try of the run is not trusted again, and the shapes of large outputs the
// memo did not size are remembered. key is the inputs' memoKey; when nil,
// one is built in buf if needed.
func (o *outputs) succeeded(a *attempt, key, buf []byte, inputs []*tensor.Tensor, out []ort.Value) {
	if a.retried != nil {
		o.distrust(a, key)
	}
	if a.memo != nil || o.memo.off.Load() {
		return
	}
	if shapes := largeShapes(o.plans, out); shapes != nil {
		if key == nil {
			key = shapesKey(buf, inputs)
		}
		o.memo.remember(key, shapes)
	}
}

// distrust stops sizing outputs the way a try that failed and a later one
// that succeeded without them had them sized: by dimension names for the
// whole model, from the memo for those input shapes.
func (o *outputs) distrust(a *attempt, key []byte) {
	if a.retriedByName && o.noPool.CompareAndSwap(false, true) {
		o.log.Warn("outputs cannot be allocated before the run (the model's output shapes do not follow its dimension names); ONNX Runtime allocates them from now on", zap.Error(a.retried))
	}
	if a.retriedMemo && o.memo.missed(key) {
		o.log.Info("output shapes vary between runs with the same input shapes; ONNX Runtime allocates them from now on", zap.Error(a.retried))
	}
}

// failed looks at a try that failed with err, with its outputs out (which
// it destroys), and sets a up for the next try: it returns nil when the
// run should be tried again, else the error to return.
func (o *outputs) failed(a *attempt, out []ort.Value, err error) error {
	i := o.unconverted(out)
	destroyValues(out)
	var ie *core.InferenceError
	switch {
	case a.pooledAt != nil && a.retried == nil && errors.As(err, &ie):
		// Perhaps the outputs are not the shapes they were sized to.
		a.retried, a.retriedByName, a.retriedMemo = err, a.byName, a.memo != nil
		a.byName, a.memo = false, nil
	case i >= 0 && (a.scalarAt == nil || !a.scalarAt[i]):
		if a.scalarAt == nil {
			a.scalarAt = make([]bool, len(o.plans))
		}
		a.scalarAt[i] = true
		o.scalarSeen[i].Store(true)
	case i >= 0:
		return &core.InferenceError{Err: fmt.Errorf("output '%s': %w", o.plans[i].spec.Name, err)}
	case a.learnt && errors.As(err, &ie):
		// A learnt scalar is not rank 0 for these inputs: unlearn them.
		a.learnt, a.scalarAt = false, nil
		for j := range o.scalarSeen {
			o.scalarSeen[j].Store(false)
		}
	default:
		return err
	}
	return nil
}

// unconverted returns the index of the output the Go binding failed to
// convert after a run (it leaves a typed nil there), or -1. Only outputs of
// unknown shape whose type has a scalar form count.
func (o *outputs) unconverted(out []ort.Value) int {
	for i, v := range out {
		if v == nil || !isNil(v) {
			continue
		}
		plan := o.plans[i]
		if plan.spec.Kind == core.KindTensor && plan.spec.Shape == nil && hasScalar(plan.dtype) {
			return i
		}
		return -1
	}
	return -1
}

// alloc allocates the outputs of a's next try: the rank-0 ones (declared,
// or marked in a.scalarAt) and float16/bfloat16 ones always, large ones
// sized by name (when a.byName) or from the memo (a.memo) in storage from
// the tensor pools, marked in a.pooledAt. The rest are left nil for ONNX
// Runtime to allocate. On error nothing is left allocated.
func (o *outputs) alloc(a *attempt, inputs []*tensor.Tensor) (out []ort.Value, err error) {
	out = make([]ort.Value, len(o.plans))
	a.pooledAt = nil
	defer func() {
		if err != nil {
			destroyValues(out)
		}
	}()
	for i := range o.plans {
		plan := &o.plans[i]
		var v ort.Value
		pooled := false
		switch {
		case (plan.rank0 || (a.scalarAt != nil && a.scalarAt[i])) && plan.dtype != tensor.String:
			// ONNX Runtime allocates rank-0 strings, and the binding
			// wraps those.
			v, err = plan.scalar()
		case plan.pooled && a.byName:
			shape, ok := plan.shapeFor(inputs)
			if !ok {
				continue // an optional input left out: ONNX Runtime sizes it
			}
			v, err = newPooledOutput(plan.dtype, shape)
			pooled = v != nil
		case plan.prealloc == tensor.Invalid:
			if a.memo != nil && a.memo[i] != nil && plan.memoable() {
				v, err = newPooledOutput(plan.dtype, a.memo[i])
				pooled = v != nil
			}
		default:
			v, err = plan.halfFloats(inputs)
		}
		if err != nil {
			return nil, err
		}
		out[i] = v
		if pooled {
			if a.pooledAt == nil {
				a.pooledAt = make([]bool, len(out))
			}
			a.pooledAt[i] = true
		}
	}
	return out, nil
}

// scalar allocates the output as rank 0.
func (plan *outputPlan) scalar() (ort.Value, error) {
	if plan.dtype == tensor.Float16 || plan.dtype == tensor.BFloat16 {
		// No rank-0 custom-data values in the binding: a [1] tensor, which
		// holds the result when the run's own output is [1] (rank-0 inputs
		// of these types go in as [1]); Result reports it as rank 0.
		v, err := ort.NewCustomDataTensor(ort.NewShape(1), make([]byte, 2), ortTypeOf(plan.dtype))
		if err != nil {
			return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
		}
		return v, nil
	}
	if !hasScalar(plan.dtype) {
		return nil, fmt.Errorf("output '%s' is a rank-0 %s, which svc's ONNX Runtime binding cannot return", plan.spec.Name, plan.dtype)
	}
	v, err := newScalar(plan.dtype)
	if err != nil {
		return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
	}
	return v, nil
}

// halfFloats allocates a float16 or bfloat16 output, sized from the
// inputs.
func (plan *outputPlan) halfFloats(inputs []*tensor.Tensor) (ort.Value, error) {
	shape, ok := plan.shapeFor(inputs)
	if !ok {
		return nil, fmt.Errorf("output '%s' is %s with a dynamic shape svc cannot size before the run", plan.spec.Name, plan.prealloc)
	}
	// The Go binding wants at least one byte even for an empty tensor.
	n := max(shape.FlattenedSize(), 1)
	v, err := ort.NewCustomDataTensor(shape, make([]byte, 2*n), ortTypeOf(plan.prealloc))
	if err != nil {
		return nil, fmt.Errorf("allocate output '%s': %w", plan.spec.Name, err)
	}
	return v, nil
}

// shapeFor is the output's shape for these inputs, its dynamic dimensions
// taken from the input dimensions of the same name; ok is false when one
// of them is not at hand.
func (plan *outputPlan) shapeFor(inputs []*tensor.Tensor) (shape ort.Shape, ok bool) {
	shape = make(ort.Shape, len(plan.spec.Shape))
	for axis, d := range plan.spec.Shape {
		if d >= 0 {
			shape[axis] = d
			continue
		}
		src := plan.dimFrom[axis]
		if src[0] < 0 || inputs[src[0]] == nil || src[1] >= len(inputs[src[0]].Shape) {
			return nil, false
		}
		shape[axis] = inputs[src[0]].Shape[src[1]]
	}
	return shape, true
}

// newPooledOutput allocates an output of element type dt and this shape
// from the tensor pools, or returns nil when it is too small to pool.
func newPooledOutput(dt tensor.DType, shape ort.Shape) (ort.Value, error) {
	n := shape.FlattenedSize()
	if n <= 0 || n*int64(dt.Size()) < tensor.MinPooled {
		return nil, nil
	}
	switch dt {
	case tensor.Float32:
		return ort.NewTensor(shape, tensor.MakeSlice[float32](int(n)))
	case tensor.Float64:
		return ort.NewTensor(shape, tensor.MakeSlice[float64](int(n)))
	case tensor.Int8:
		return ort.NewTensor(shape, tensor.MakeSlice[int8](int(n)))
	case tensor.Int16:
		return ort.NewTensor(shape, tensor.MakeSlice[int16](int(n)))
	case tensor.Int32:
		return ort.NewTensor(shape, tensor.MakeSlice[int32](int(n)))
	case tensor.Int64:
		return ort.NewTensor(shape, tensor.MakeSlice[int64](int(n)))
	case tensor.Uint8:
		return ort.NewTensor(shape, tensor.MakeSlice[uint8](int(n)))
	case tensor.Uint16:
		return ort.NewTensor(shape, tensor.MakeSlice[uint16](int(n)))
	case tensor.Uint32:
		return ort.NewTensor(shape, tensor.MakeSlice[uint32](int(n)))
	case tensor.Uint64:
		return ort.NewTensor(shape, tensor.MakeSlice[uint64](int(n)))
	case tensor.Bool:
		return ort.NewTensor(shape, tensor.MakeSlice[bool](int(n)))
	}
	return nil, nil
}
