package core

import (
	"fmt"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

// Result holds the outputs of one run, in the model's output order, as ONNX
// Runtime values, or as tensors when the run was split among merged
// requests. Close releases them.
type Result struct {
	values  []ort.Value
	tensors []*tensor.Tensor
	// rank0 marks outputs declared rank 0, which may come back from ONNX
	// Runtime as one-element [1] tensors (see allocOutputs).
	rank0 []bool
	// pooled marks the outputs whose storage came from the tensor pools
	// (nil: none); Release gives it back.
	pooled []bool
	// shared, for one member's part of a merged run, holds the run's
	// pooled storage, which goes back once every part is released.
	shared *sharedStorage
}

// sharedStorage is pooled output storage that the parts of a merged run
// view; the last part released gives it back.
type sharedStorage struct {
	tensors []*tensor.Tensor
	refs    atomic.Int64
}

// release drops one part's reference.
func (s *sharedStorage) release() {
	if s.refs.Add(-1) == 0 {
		tensor.RecycleAll(s.tensors)
	}
}

// detachPooled closes the result but keeps its pooled storage alive for
// parts that view it: it returns that storage (nil when none).
func (r *Result) detachPooled() []*tensor.Tensor {
	var keep []*tensor.Tensor
	for i, at := range r.pooled {
		if !at || i >= len(r.values) {
			continue
		}
		if t, err := fromORT(r.values[i]); err == nil {
			keep = append(keep, t)
		}
	}
	r.Close()
	return keep
}

// fromORT converts output i, giving declared rank-0 outputs shape [].
func (r *Result) fromORT(i int) (*tensor.Tensor, error) {
	t, err := fromORT(r.values[i])
	if err == nil && i < len(r.rank0) && r.rank0[i] && len(t.Shape) == 1 && t.Len() == 1 {
		t.Shape = []int64{}
	}
	return t, err
}

// Len is the number of outputs.
func (r *Result) Len() int {
	if r.tensors != nil {
		return len(r.tensors)
	}
	return len(r.values)
}

// Tensor returns output i as a tensor; it fails for sequence and map
// outputs (see Value).
func (r *Result) Tensor(i int) (*tensor.Tensor, error) {
	if r.tensors != nil {
		return r.tensors[i], nil
	}
	return r.fromORT(i)
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

// Value returns output i, whatever its kind. The data is copied out of ONNX
// Runtime only for sequences and maps; tensors share it until Close.
func (r *Result) Value(i int) (Value, error) {
	if r.tensors != nil {
		return Value{Kind: KindTensor, Tensor: r.tensors[i]}, nil
	}
	if i < len(r.rank0) && r.rank0[i] {
		t, err := r.fromORT(i)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindTensor, Tensor: t}, nil
	}
	return valueOf(r.values[i])
}

func valueOf(v ort.Value) (Value, error) {
	switch x := v.(type) {
	case *ort.Sequence:
		items, err := x.GetValues()
		if err != nil {
			return Value{}, fmt.Errorf("read sequence output: %w", err)
		}
		out := Value{Kind: KindSequence, Items: make([]Value, len(items))}
		for i, item := range items {
			if out.Items[i], err = valueOf(item); err != nil {
				return Value{}, err
			}
		}
		return out, nil
	case *ort.Map:
		keys, vals, err := x.GetKeysAndValues()
		if err != nil {
			return Value{}, fmt.Errorf("read map output: %w", err)
		}
		kt, err := fromORT(keys)
		if err != nil {
			return Value{}, err
		}
		vt, err := fromORT(vals)
		if err != nil {
			return Value{}, err
		}
		if kt.Len() != vt.Len() {
			return Value{}, fmt.Errorf("map output has %d keys and %d values", kt.Len(), vt.Len())
		}
		return Value{Kind: KindMap, Keys: kt, Values: vt}, nil
	}
	t, err := fromORT(v)
	if err != nil {
		return Value{}, err
	}
	return Value{Kind: KindTensor, Tensor: t}, nil
}

// Close releases the output values. Tensors taken from the result keep
// their data (the garbage collector frees it once they are gone).
func (r *Result) Close() {
	destroyValues(r.values)
	r.values = nil
	r.pooled = nil
}

// Release is Close for a caller that is done with every tensor it took
// from the result: the storage of large outputs goes back to the tensor
// pools for the next run, so neither those tensors nor any view of their
// data may be used afterwards.
func (r *Result) Release() {
	// Only once ONNX Runtime's values are gone is the storage reused.
	tensor.RecycleAll(r.detachPooled())
	if r.shared != nil {
		r.shared.release()
		r.shared = nil
	}
}

// NewResult wraps tensors, one per output in the model's order, as a
// Result: for runners that do not run ONNX Runtime themselves (and tests).
func NewResult(tensors []*tensor.Tensor) *Result {
	if tensors == nil {
		tensors = []*tensor.Tensor{}
	}
	return &Result{tensors: tensors}
}
