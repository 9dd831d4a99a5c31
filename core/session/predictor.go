// Package session is svc's ONNX Runtime boundary: everything that calls
// onnxruntime_go lives here. A Predictor is one ONNX Runtime session of the
// model: it describes the model from its file, checks and converts the
// inputs, plans how its outputs are allocated (outputs), runs the model
// under the run watch that ends runs whose request went away or whose time
// is up, and hands the outputs back as a core.Result. The Opener opens
// Predictors for the scheduler, and Module provides it.
package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
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
	Observer core.RunObserver
}

// Predictor runs one loaded model. It is safe for concurrent use.
type Predictor struct {
	log      *zap.Logger
	session  *ort.DynamicAdvancedSession
	provider providers.Provider
	info     core.ModelInfo
	specs    []tensor.Spec
	// defaults holds the default value of each optional input (nil for
	// required inputs).
	defaults []*tensor.Tensor
	outputs  *outputs
	timeout  time.Duration
	obs      core.RunObserver
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

var _ core.Session = (*Predictor)(nil)

// New loads the model and creates its session.
func New(o Options, log *zap.Logger) (*Predictor, error) {
	if log == nil {
		log = zap.NewNop()
	}
	desc, err := describe(o.File, int64(o.Runtime.MaxModelSize))
	if err != nil {
		return nil, fmt.Errorf("load model %q: %w", o.File, err)
	}
	if limit := int64(o.Runtime.MemoryLimit); limit > 0 {
		if size := desc.size; size > limit {
			return nil, fmt.Errorf("load model %q: the model takes %s (file and external data), more than runtime.memory_limit %s; raise the limit", o.File, humanBytes(size), humanBytes(limit))
		}
	}
	p := &Predictor{log: log, timeout: o.Runtime.Timeout.Std(), obs: o.Observer, defaults: desc.defaults}
	if p.obs == nil {
		p.obs = core.NopObserver{}
	}
	p.runOpts.New = func() any {
		ro, err := ort.NewRunOptions()
		if err != nil {
			return nil
		}
		return ro
	}
	p.session, p.provider, err = newSession(o, desc.inputNames(), desc.outputNames(), log)
	if err != nil {
		return nil, fmt.Errorf("load model %q: %w", o.File, err)
	}
	p.info = p.describeModel(o, desc)
	p.specs = make([]tensor.Spec, len(desc.inputs))
	for i, in := range desc.inputs {
		dt, _ := tensor.ParseDType(in.Type)
		p.specs[i] = tensor.Spec{Name: in.Name, DType: dt, Shape: in.Shape, Required: in.Required}
	}
	p.outputs = newOutputs(desc.inputs, desc.outputs, log)
	p.batched = core.Batchable(p.info) == nil
	p.dims = newDimCheck(p.info.Inputs, p.batched)
	p.watch = newRunWatch(watchPeriod)
	return p, nil
}

// describeModel is what /info says of the model: its description, the
// session's metadata and the configuration's, in that order of precedence.
func (p *Predictor) describeModel(o Options, desc *description) core.ModelInfo {
	info := core.ModelInfo{
		Name:     o.Name,
		Version:  o.Version,
		Format:   "onnx",
		Path:     absPath(o.File),
		Inputs:   desc.inputs,
		Outputs:  desc.outputs,
		Metadata: map[string]string{},
	}
	info.SizeMB = float64(desc.size) / (1 << 20)
	info.SizeMB = float64(int64(info.SizeMB*1000+0.5)) / 1000
	if md, err := p.session.GetModelMetadata(); err == nil {
		fillMetadata(&info, md)
		_ = md.Destroy()
	}
	for k, v := range o.Metadata {
		info.Metadata[k] = v
	}
	if info.Version == "" {
		info.Version = "1"
	}
	for i := range info.Outputs {
		if l, ok := o.Labels[info.Outputs[i].Name]; ok {
			info.Outputs[i].Labels = l
		}
	}
	return info
}

// Info describes the model (GET /info).
func (p *Predictor) Info() core.ModelInfo { return p.info }

// Specs lists what each input accepts, in input order.
func (p *Predictor) Specs() []tensor.Spec { return p.specs }

// Provider is the execution provider the session actually runs on.
func (p *Predictor) Provider() core.Provider { return p.provider }

// ExecutionProvider is the provider the session runs on, as the providers
// package knows it.
func (p *Predictor) ExecutionProvider() providers.Provider { return p.provider }

// Predict runs the model on inputs, given in Specs order; nil entries are
// optional inputs that take their default. ctx cancels the run.
func (p *Predictor) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	if len(inputs) != len(p.specs) {
		return nil, fmt.Errorf("predict: got %d inputs, the model has %d", len(inputs), len(p.specs))
	}
	// in stays on the stack for a few inputs: inputValues fills it.
	in := make([]ort.Value, len(inputs))
	if err := p.inputValues(in, inputs); err != nil {
		return nil, err
	}
	defer destroyValues(in)
	var keyBuf [64]byte
	key := p.outputs.memoKey(keyBuf[:0], inputs)
	var a attempt
	p.outputs.begin(&a, key)
	for {
		out, err := p.outputs.alloc(&a, inputs)
		if err != nil {
			return nil, &core.InferenceError{Err: err}
		}
		start := time.Now()
		err = p.run(ctx, in, out)
		if err == nil {
			p.obs.Executed(p.rows(inputs), time.Since(start))
			p.outputs.succeeded(&a, key, keyBuf[:0], inputs, out)
			return &result{values: out, rank0: p.outputs.rank0, pooled: a.pooledAt}, nil
		}
		if err := p.outputs.failed(&a, out, err); err != nil {
			return nil, err
		}
	}
}

// inputValues checks the inputs and wraps them in in as ONNX Runtime
// values, an optional input left out as its default. On error in holds
// nothing.
func (p *Predictor) inputValues(in []ort.Value, inputs []*tensor.Tensor) error {
	if err := p.dims.check(inputs); err != nil {
		return err
	}
	for i, t := range inputs {
		if t == nil {
			t = p.defaults[i]
		}
		if t == nil {
			destroyValues(in)
			return fmt.Errorf("predict: input %q has no value and no default", p.specs[i].Name)
		}
		v, err := toORT(t)
		if err != nil {
			destroyValues(in)
			return &core.InferenceError{Err: fmt.Errorf("input '%s': %w", p.specs[i].Name, err)}
		}
		in[i] = v
	}
	return nil
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
		return &core.InferenceError{Err: errors.New("cannot create run options")}
	}
	if ctx.Err() != nil {
		p.runOpts.Put(ro)
		return core.Canceled(ctx)
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
		return &core.TimeoutError{After: p.timeout}
	case canceled:
		return core.Canceled(ctx)
	}
	return &core.InferenceError{Err: cleanORTError(err)}
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
