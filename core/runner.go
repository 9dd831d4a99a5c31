package core

import (
	"context"
	"sync"

	"github.com/svc-dev/svc/core/tensor"
)

// Runner runs inputs on the model: one session (core/session), or the
// scheduler in front of the sessions (core/sched). Every protocol talks to
// the model through it.
type Runner interface {
	// Info describes the model.
	Info() ModelInfo
	// Specs lists what each input accepts, in input order.
	Specs() []tensor.Spec
	// Predict runs the model on inputs, given in Specs order; nil entries
	// are optional inputs that take their default. ctx cancels the run.
	Predict(ctx context.Context, inputs []*tensor.Tensor) (Result, error)
}

// Result holds the outputs of one run, in the model's output order.
type Result interface {
	// Len is the number of outputs.
	Len() int
	// Tensor returns output i as a tensor; it fails for sequence and map
	// outputs (see Value).
	Tensor(i int) (*tensor.Tensor, error)
	// Value returns output i, whatever its kind.
	Value(i int) (Value, error)
	// Close releases what the result holds outside Go's heap. Tensors taken
	// from it keep their data (the garbage collector frees it once they are
	// gone).
	Close()
	// Release is Close for a caller that is done with every tensor it took
	// from the result: storage from the tensor pools goes back for the next
	// run, so neither those tensors nor any view of their data may be used
	// afterwards.
	Release()
}

// Detacher is a Result whose outputs may sit in storage from the tensor
// pools. Detach closes the result but hands that storage to the caller
// instead of giving it back: the caller gives it back (tensor.RecycleAll)
// once nothing views it. The scheduler uses it to let the parts of a
// merged run view the run's outputs.
type Detacher interface {
	Detach() []*tensor.Tensor
}

// Value is one output: a tensor, a sequence of values, or a map from the
// elements of one tensor (Keys) to those of another (Values), pair by pair.
type Value struct {
	Kind   ValueKind
	Tensor *tensor.Tensor
	Items  []Value
	Keys   *tensor.Tensor
	Values *tensor.Tensor
}

// NewResult wraps tensors, one per output in the model's order, as a
// Result: for runners that do not run ONNX Runtime themselves (and tests).
func NewResult(tensors []*tensor.Tensor) Result {
	return NewResultReleasing(tensors, nil)
}

// NewResultReleasing is NewResult with a function that Release calls, once
// (nil: none): the parts of a merged run give their share of the run's
// pooled storage back through it.
func NewResultReleasing(tensors []*tensor.Tensor, release func()) Result {
	if tensors == nil {
		tensors = []*tensor.Tensor{}
	}
	return &tensorResult{tensors: tensors, release: release}
}

// tensorResult is a Result of tensors in Go memory.
type tensorResult struct {
	tensors []*tensor.Tensor
	release func()
	once    sync.Once
}

var _ Result = (*tensorResult)(nil)

func (r *tensorResult) Len() int { return len(r.tensors) }

func (r *tensorResult) Tensor(i int) (*tensor.Tensor, error) { return r.tensors[i], nil }

func (r *tensorResult) Value(i int) (Value, error) {
	return Value{Kind: KindTensor, Tensor: r.tensors[i]}, nil
}

// Close does nothing: the tensors are Go's.
func (r *tensorResult) Close() {}

func (r *tensorResult) Release() {
	if r.release != nil {
		r.once.Do(r.release)
	}
}
