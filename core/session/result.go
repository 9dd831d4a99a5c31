package session

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// result holds the outputs of one run as ONNX Runtime values.
type result struct {
	values []ort.Value
	// rank0 marks outputs declared rank 0, which may come back from ONNX
	// Runtime as one-element [1] tensors (see outputPlan.scalar).
	rank0 []bool
	// pooled marks the outputs whose storage came from the tensor pools
	// (nil: none); Release gives it back.
	pooled []bool
}

var (
	_ core.Result   = (*result)(nil)
	_ core.Detacher = (*result)(nil)
)

// Detach closes the result but keeps its pooled storage alive for views
// of it: it returns that storage (nil when none).
func (r *result) Detach() []*tensor.Tensor {
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

// tensor converts output i, giving declared rank-0 outputs shape [].
func (r *result) tensor(i int) (*tensor.Tensor, error) {
	t, err := fromORT(r.values[i])
	if err == nil && i < len(r.rank0) && r.rank0[i] && len(t.Shape) == 1 && t.Len() == 1 {
		t.Shape = []int64{}
	}
	return t, err
}

func (r *result) Len() int { return len(r.values) }

func (r *result) Tensor(i int) (*tensor.Tensor, error) { return r.tensor(i) }

// Value returns output i, whatever its kind. The data is copied out of
// ONNX Runtime only for sequences and maps.
func (r *result) Value(i int) (core.Value, error) {
	if i < len(r.rank0) && r.rank0[i] {
		t, err := r.tensor(i)
		if err != nil {
			return core.Value{}, err
		}
		return core.Value{Kind: core.KindTensor, Tensor: t}, nil
	}
	return valueOf(r.values[i])
}

func valueOf(v ort.Value) (core.Value, error) {
	switch x := v.(type) {
	case *ort.Sequence:
		items, err := x.GetValues()
		if err != nil {
			return core.Value{}, fmt.Errorf("read sequence output: %w", err)
		}
		out := core.Value{Kind: core.KindSequence, Items: make([]core.Value, len(items))}
		for i, item := range items {
			if out.Items[i], err = valueOf(item); err != nil {
				return core.Value{}, err
			}
		}
		return out, nil
	case *ort.Map:
		keys, vals, err := x.GetKeysAndValues()
		if err != nil {
			return core.Value{}, fmt.Errorf("read map output: %w", err)
		}
		kt, err := fromORT(keys)
		if err != nil {
			return core.Value{}, err
		}
		vt, err := fromORT(vals)
		if err != nil {
			return core.Value{}, err
		}
		if kt.Len() != vt.Len() {
			return core.Value{}, fmt.Errorf("map output has %d keys and %d values", kt.Len(), vt.Len())
		}
		return core.Value{Kind: core.KindMap, Keys: kt, Values: vt}, nil
	}
	t, err := fromORT(v)
	if err != nil {
		return core.Value{}, err
	}
	return core.Value{Kind: core.KindTensor, Tensor: t}, nil
}

// Close releases the output values. Tensors taken from the result keep
// their data (the garbage collector frees it once they are gone).
func (r *result) Close() {
	destroyValues(r.values)
	r.values = nil
	r.pooled = nil
}

// Release gives the pooled storage back once ONNX Runtime's values are
// gone.
func (r *result) Release() {
	tensor.RecycleAll(r.Detach())
}
