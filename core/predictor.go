// Package core is svc's model runtime: it loads one ONNX model into an ONNX
// Runtime session, describes its inputs and outputs, and runs inferences on
// decoded tensors.
package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
)

// Options configure a Predictor.
type Options struct {
	// Name is the model name shown by /health and /info.
	Name string
	// File is the .onnx file to load.
	File string
	// Version overrides the version found in the model.
	Version string
	// Metadata is merged over the model's own custom metadata.
	Metadata map[string]string
	// Labels maps output names to class labels.
	Labels map[string][]string
	// Runtime holds ONNX Runtime settings.
	Runtime config.Runtime
	// Provider is the execution provider to run on; Fallback is used when
	// creating a session with Provider fails (nil = no fallback).
	Provider, Fallback providers.Provider
	// ProviderOptions configure Provider.
	ProviderOptions providers.Options
	// Observer is told about each successful run (nil: nobody).
	Observer RunObserver
}

// Predictor runs one loaded model. It is safe for concurrent use.
type Predictor struct {
	log      *zap.Logger
	session  *ort.DynamicAdvancedSession
	provider providers.Provider
	info     ModelInfo
	specs    []tensor.Spec
	// defaults holds the default value of each optional input (nil for
	// required inputs).
	defaults []*tensor.Tensor
	outputs  []outputPlan
	// scalarSeen marks outputs of unknown shape that came back rank 0: they
	// are pre-allocated as scalars from then on.
	scalarSeen []atomic.Bool
	// rank0 marks the outputs declared rank 0.
	rank0 []bool
	// noPool is set once a run failed with pre-allocated outputs and
	// succeeded without them (the model's dimension names do not tell its
	// output shapes): ONNX Runtime allocates every output from then on.
	noPool atomic.Bool
	// memo sizes large outputs from the shapes of earlier runs.
	memo    shapeMemo
	timeout time.Duration
	obs     RunObserver
	// batched is true when the model has a batch dimension (Batchable): a
	// run then counts its rows as inferences.
	batched bool
	// dims checks the inputs' named dimensions before a run.
	dims    dimCheck
	runOpts sync.Pool
	// watch ends the runs whose request is canceled or whose time is up.
	watch   *runWatch
	closing sync.Once
}

// outputPlan says how to allocate an output before a run.
type outputPlan struct {
	spec OutputSpec
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
	// allocated before the run from the tensor pools, so ONNX Runtime
	// writes into memory the next request reuses instead of into its
	// arena, out of which the Go binding would copy it.
	pooled bool
}

// NewPredictor loads the model and creates its session.
func NewPredictor(o Options, log *zap.Logger) (*Predictor, error) {
	if log == nil {
		log = zap.NewNop()
	}
	desc, err := describe(o.File)
	if err != nil {
		return nil, fmt.Errorf("load model %q: %w", o.File, err)
	}
	if limit := int64(o.Runtime.MemoryLimit); limit > 0 {
		if size := ModelSize(o.File, desc.externalFiles); size > limit {
			return nil, fmt.Errorf("load model %q: the model takes %s (file and external data), more than runtime.memory_limit %s; raise the limit", o.File, humanBytes(size), humanBytes(limit))
		}
	}
	p := &Predictor{log: log, timeout: o.Runtime.Timeout.Std(), obs: o.Observer}
	if p.obs == nil {
		p.obs = NopObserver{}
	}
	p.runOpts.New = func() any {
		ro, err := ort.NewRunOptions()
		if err != nil {
			return nil
		}
		return ro
	}

	inputNames := make([]string, len(desc.inputs))
	for i, in := range desc.inputs {
		inputNames[i] = in.Name
	}
	outputNames := make([]string, len(desc.outputs))
	for i, out := range desc.outputs {
		outputNames[i] = out.Name
	}

	p.session, p.provider, err = newSession(o, inputNames, outputNames, log)
	if err != nil {
		return nil, fmt.Errorf("load model %q: %w", o.File, err)
	}

	p.info = ModelInfo{
		Name:     o.Name,
		Version:  o.Version,
		Format:   "onnx",
		Path:     absPath(o.File),
		Inputs:   desc.inputs,
		Outputs:  desc.outputs,
		Metadata: map[string]string{},
	}
	p.info.SizeMB = float64(ModelSize(o.File, desc.externalFiles)) / (1 << 20)
	p.info.SizeMB = float64(int64(p.info.SizeMB*1000+0.5)) / 1000
	if md, err := p.session.GetModelMetadata(); err == nil {
		p.fillMetadata(md, desc)
		_ = md.Destroy()
	}
	for k, v := range o.Metadata {
		p.info.Metadata[k] = v
	}
	if p.info.Version == "" {
		p.info.Version = "1"
	}
	for i := range p.info.Outputs {
		if l, ok := o.Labels[p.info.Outputs[i].Name]; ok {
			p.info.Outputs[i].Labels = l
		}
	}

	p.specs = make([]tensor.Spec, len(desc.inputs))
	p.defaults = desc.defaults
	for i, in := range desc.inputs {
		dt, _ := tensor.ParseDType(in.Type)
		p.specs[i] = tensor.Spec{Name: in.Name, DType: dt, Shape: in.Shape, Required: in.Required}
	}
	p.outputs = planOutputs(desc.inputs, desc.outputs)
	p.scalarSeen = make([]atomic.Bool, len(p.outputs))
	p.rank0 = make([]bool, len(p.outputs))
	for i, o := range p.outputs {
		p.rank0[i] = o.rank0
	}
	p.batched = Batchable(p.info) == nil
	p.dims = newDimCheck(p.info.Inputs, p.batched)
	p.watch = newRunWatch(watchPeriod)
	return p, nil
}

// newSession creates the session on the chosen provider, falling back to
// o.Fallback when that fails.
func newSession(o Options, inputs, outputs []string, log *zap.Logger) (*ort.DynamicAdvancedSession, providers.Provider, error) {
	s, err := sessionOn(o, o.Provider, inputs, outputs)
	if err == nil {
		return s, o.Provider, nil
	}
	if o.Fallback == nil || o.Provider == nil || o.Fallback.Name() == o.Provider.Name() {
		return nil, nil, err
	}
	log.Warn("session creation failed on provider; falling back",
		zap.String("provider", o.Provider.Name()), zap.String("fallback", o.Fallback.Name()), zap.Error(err))
	s, err2 := sessionOn(o, o.Fallback, inputs, outputs)
	if err2 != nil {
		return nil, nil, fmt.Errorf("%w; on %s: %w", err, o.Fallback.Name(), err2)
	}
	return s, o.Fallback, nil
}

func sessionOn(o Options, p providers.Provider, inputs, outputs []string) (*ort.DynamicAdvancedSession, error) {
	so, err := sessionOptions(o.Runtime)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if p != nil {
		if err := p.Configure(so, o.ProviderOptions); err != nil {
			return nil, fmt.Errorf("configure provider %s: %w", p.Name(), err)
		}
	}
	s, err := ort.NewDynamicAdvancedSession(o.File, inputs, outputs, so)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", cleanORTError(err))
	}
	return s, nil
}

func sessionOptions(r config.Runtime) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	fail := func(what string, err error) (*ort.SessionOptions, error) {
		_ = so.Destroy()
		return nil, fmt.Errorf("session options: %s: %w", what, err)
	}
	if r.IntraOpThreads > 0 {
		if err := so.SetIntraOpNumThreads(r.IntraOpThreads); err != nil {
			return fail("intra-op threads", err)
		}
	}
	if r.InterOpThreads > 0 {
		if err := so.SetInterOpNumThreads(r.InterOpThreads); err != nil {
			return fail("inter-op threads", err)
		}
	}
	var level ort.GraphOptimizationLevel = ort.GraphOptimizationLevelEnableAll
	switch r.GraphOptimization {
	case "disabled":
		level = ort.GraphOptimizationLevelDisableAll
	case "basic":
		level = ort.GraphOptimizationLevelEnableBasic
	case "extended":
		level = ort.GraphOptimizationLevelEnableExtended
	}
	if err := so.SetGraphOptimizationLevel(level); err != nil {
		return fail("graph optimization level", err)
	}
	spin := "0"
	if r.Spinning {
		spin = "1"
	}
	for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err := so.AddSessionConfigEntry(key, spin); err != nil {
			return fail("thread spinning", err)
		}
	}
	if r.MemoryLimit > 0 {
		if err := so.AddSessionConfigEntry(onnxrt.UseEnvAllocatorsKey, "1"); err != nil {
			return fail("shared allocator", err)
		}
	}
	if r.OptimizedModelPath != "" {
		if err := so.SetOptimizedModelFilePath(r.OptimizedModelPath); err != nil {
			return fail("optimized model path", err)
		}
	}
	if r.Profile != "" {
		if err := so.EnableProfiling(r.Profile); err != nil {
			return fail("profiling", err)
		}
	}
	return so, nil
}

func (p *Predictor) fillMetadata(md *ort.ModelMetadata, desc *description) {
	keys, _ := md.GetCustomMetadataMapKeys()
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok, err := md.LookupCustomMetadataMap(k); err == nil && ok {
			p.info.Metadata[k] = v
		}
	}
	if d, err := md.GetDescription(); err == nil && d != "" {
		p.info.Metadata["description"] = d
	}
	if s, err := md.GetProducerName(); err == nil && s != "" {
		p.info.Metadata["producer"] = s
	}
	if g, err := md.GetGraphName(); err == nil && g != "" {
		p.info.Metadata["graph"] = g
	}
	if p.info.Version == "" {
		if v, ok := p.info.Metadata["version"]; ok && v != "" {
			p.info.Version = v
		} else if v, err := md.GetVersion(); err == nil && v > 0 && v != math.MaxInt64 {
			// ONNX Runtime reports an unset model_version as the largest
			// int64.
			p.info.Version = strconv.FormatInt(v, 10)
		}
	}
}

// fillUntypedOutputs takes the type of outputs declared without one from
// ONNX Runtime, which infers it; their shape stays unknown.
func fillUntypedOutputs(file string, outputs []OutputSpec) {
	untyped := false
	for _, o := range outputs {
		untyped = untyped || o.Kind == KindOther
	}
	if !untyped {
		return
	}
	_, infos, err := ort.GetInputOutputInfo(file)
	if err != nil {
		return
	}
	for i := range outputs {
		if outputs[i].Kind != KindOther {
			continue
		}
		for _, info := range infos {
			if info.Name == outputs[i].Name && info.OrtValueType == ort.ONNXTypeTensor {
				if dt := dtypeOf(info.DataType); dt != tensor.Invalid {
					outputs[i].Kind, outputs[i].Type, outputs[i].Shape = KindTensor, dt.String(), nil
				}
			}
		}
	}
}

// Info describes the model (GET /info).
func (p *Predictor) Info() ModelInfo { return p.info }

// Specs lists what each input accepts, in input order.
func (p *Predictor) Specs() []tensor.Spec { return p.specs }

// Provider is the execution provider the session actually runs on.
func (p *Predictor) Provider() providers.Provider { return p.provider }

// Predict runs the model on inputs, given in Specs order; nil entries are
// optional inputs that take their default. ctx cancels the run.
func (p *Predictor) Predict(ctx context.Context, inputs []*tensor.Tensor) (*Result, error) {
	if len(inputs) != len(p.specs) {
		return nil, fmt.Errorf("predict: got %d inputs, the model has %d", len(inputs), len(p.specs))
	}
	if err := p.dims.check(inputs); err != nil {
		return nil, err
	}
	in := make([]ort.Value, len(inputs))
	defer destroyValues(in)
	for i, t := range inputs {
		if t == nil {
			t = p.defaults[i]
		}
		if t == nil {
			return nil, fmt.Errorf("predict: input %q has no value and no default", p.specs[i].Name)
		}
		v, err := toORT(t)
		if err != nil {
			return nil, &InferenceError{Err: fmt.Errorf("input '%s': %w", p.specs[i].Name, err)}
		}
		in[i] = v
	}
	// An output of unknown shape that turns out rank 0 fails the Go
	// binding's conversion; the run is repeated with that output
	// pre-allocated as a scalar (at most once per output), and later runs
	// pre-allocate it at once. When such a learnt scalar makes a run fail
	// (the output is not rank 0 for every input), the run is repeated once
	// without them.
	// scalarAt stays nil (no allocation per request) until an output has
	// been learnt to be a scalar.
	var scalarAt []bool
	learnt := false
	for i := range p.scalarSeen {
		if p.scalarSeen[i].Load() {
			if scalarAt == nil {
				scalarAt = make([]bool, len(p.outputs))
			}
			scalarAt[i], learnt = true, true
		}
	}
	// Large outputs get storage from the tensor pools, sized before the
	// run from the inputs' dimensions (byName) or from the shapes earlier
	// runs with the same input shapes gave (memo). A run that fails with
	// such outputs is repeated once with ONNX Runtime allocating them
	// (retried holds the first error); if that succeeds, what sized them
	// is not trusted again.
	byName := !p.noPool.Load()
	// key is built in keyBuf (the memo copies what it keeps), so a run
	// whose input shapes fit allocates nothing for it.
	var keyBuf [64]byte
	var key []byte
	var memo []ort.Shape
	if p.memo.active.Load() {
		key = shapesKey(keyBuf[:0], inputs)
		memo = p.memo.lookup(key)
	}
	var retried error
	var retriedByName, retriedMemo bool
	for {
		out, pooledAt, err := p.allocOutputs(inputs, scalarAt, byName, memo)
		if err != nil {
			return nil, &InferenceError{Err: err}
		}
		start := time.Now()
		err = p.run(ctx, in, out)
		if err == nil {
			p.obs.Executed(p.rows(inputs), time.Since(start))
			res := &Result{values: out, rank0: p.rank0, pooled: pooledAt}
			if retried != nil {
				p.distrust(retriedByName, retriedMemo, key, retried)
			}
			if memo == nil && !p.memo.off.Load() {
				if shapes := largeShapes(p.outputs, out); shapes != nil {
					if key == nil {
						key = shapesKey(keyBuf[:0], inputs)
					}
					p.memo.remember(key, shapes)
				}
			}
			return res, nil
		}
		i := p.unconverted(out)
		destroyValues(out)
		var ie *InferenceError
		switch {
		case pooledAt != nil && retried == nil && errors.As(err, &ie):
			// Perhaps the outputs are not the shapes they were sized to.
			retried, retriedByName, retriedMemo = err, byName, memo != nil
			byName, memo = false, nil
		case i >= 0 && (scalarAt == nil || !scalarAt[i]):
			if scalarAt == nil {
				scalarAt = make([]bool, len(p.outputs))
			}
			scalarAt[i] = true
			p.scalarSeen[i].Store(true)
		case i >= 0:
			return nil, &InferenceError{Err: fmt.Errorf("output '%s': %w", p.outputs[i].spec.Name, err)}
		case learnt && errors.As(err, &ie):
			learnt, scalarAt = false, nil
			for j := range p.scalarSeen {
				p.scalarSeen[j].Store(false)
			}
		default:
			return nil, err
		}
	}
}

// distrust stops sizing outputs the way a run that failed (with err) and
// then succeeded without them had them sized: by dimension names for the
// whole model, from the memo for that combination of input shapes.
func (p *Predictor) distrust(byName, memo bool, key []byte, err error) {
	if byName && p.noPool.CompareAndSwap(false, true) {
		p.log.Warn("outputs cannot be allocated before the run (the model's output shapes do not follow its dimension names); ONNX Runtime allocates them from now on", zap.Error(err))
	}
	if memo && p.memo.missed(key) {
		p.log.Info("output shapes vary between runs with the same input shapes; ONNX Runtime allocates them from now on", zap.Error(err))
	}
}

// unconverted returns the index of the output the Go binding failed to
// convert after a run (it leaves a typed nil there), or -1. Only outputs of
// unknown shape whose type has a scalar form count.
func (p *Predictor) unconverted(out []ort.Value) int {
	for i, v := range out {
		if v == nil || !isNil(v) {
			continue
		}
		plan := p.outputs[i]
		if plan.spec.Kind == KindTensor && plan.spec.Shape == nil && hasScalar(plan.dtype) {
			return i
		}
		return -1
	}
	return -1
}

// rows is the number of inferences a run makes: the batch size of the first
// input when the model is Batchable, else 1 (and at least 1).
func (p *Predictor) rows(inputs []*tensor.Tensor) int {
	if p.batched && inputs[0] != nil && len(inputs[0].Shape) > 0 && inputs[0].Shape[0] > 1 {
		return int(inputs[0].Shape[0])
	}
	return 1
}

// run executes the session with a run option that ctx and the timeout can
// terminate (see runWatch).
func (p *Predictor) run(ctx context.Context, in, out []ort.Value) error {
	ro, _ := p.runOpts.Get().(*ort.RunOptions)
	if ro == nil {
		return &InferenceError{Err: errors.New("cannot create run options")}
	}
	if ctx.Err() != nil {
		p.runOpts.Put(ro)
		return fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
	}
	g := p.watch.begin(ctx, ro, p.timeout)
	err := p.session.RunWithOptions(in, out, ro)
	timedOut, canceled := p.watch.end(g)
	terminated := timedOut || canceled
	if !terminated {
		p.runOpts.Put(ro)
	} else if ro.UnsetTerminate() == nil {
		p.runOpts.Put(ro)
	} else {
		_ = ro.Destroy()
	}
	if err == nil {
		return nil
	}
	switch {
	case timedOut:
		return &TimeoutError{After: p.timeout}
	case canceled:
		return fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
	}
	return &InferenceError{Err: cleanORTError(err)}
}

// cleanORTError drops the Go wrapper's prefixes so clients see ONNX
// Runtime's own message.
func cleanORTError(err error) error {
	msg := err.Error()
	for _, prefix := range []string{"Error running network: ", "Error creating C session from file: ", "Error creating session: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return errors.New(msg)
}

// Close releases the session.
func (p *Predictor) Close() error {
	var err error
	p.closing.Do(func() {
		p.watch.Stop()
		if p.session != nil {
			if e := p.session.Destroy(); e != nil {
				err = fmt.Errorf("destroy session: %w", e)
			}
		}
	})
	return err
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// humanBytes formats a size in binary units.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
