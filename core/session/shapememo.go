package session

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/svc-dev/svc/core"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

// shapeMemo remembers the shapes of a model's large outputs for each
// combination of input shapes it has run, so that the next run with the
// same input shapes finds those outputs sized before the run in storage
// from the tensor pools (see outputPlan.pooled, which does the same from
// dimension names when the model's names allow it). Most models' output
// shapes follow from their input shapes; one whose do not (a detector
// whose boxes depend on the image) makes a remembered run fail, which is
// repeated with ONNX Runtime allocating, and that combination is not
// remembered again. After maxShapeMisses such failures the memo stops for
// the model.
//
// A model whose outputs are all small never turns the memo on, and pays
// nothing for it.
type shapeMemo struct {
	// active is set once a run had a large output the memo could size.
	active atomic.Bool
	// off is set after too many misses.
	off    atomic.Bool
	misses atomic.Int32
	mu     sync.RWMutex
	// shapes maps a key of the input shapes to the shape of each output
	// to size (nil entries: left to ONNX Runtime); a nil slice marks a
	// key whose outputs did not keep their shapes.
	shapes map[string][]ort.Shape
}

const (
	// maxShapeKeys bounds the combinations of input shapes remembered.
	maxShapeKeys = 256
	// maxShapeMisses is how many failed remembered runs turn the memo off.
	maxShapeMisses = 4
)

// memoable reports whether the memo may size output plan: a numeric
// tensor output that is not rank 0 and not float16/bfloat16 (which are
// sized from dimension names, or not at all). Outputs sized by name are
// memoable too, for when their names cannot be trusted.
func (plan *outputPlan) memoable() bool {
	return plan.spec.Kind == core.KindTensor && !plan.rank0 &&
		plan.prealloc == tensor.Invalid && plan.dtype.Valid() && plan.dtype != tensor.String
}

// shapesKey appends a key for the inputs' shapes to b.
func shapesKey(b []byte, inputs []*tensor.Tensor) []byte {
	for _, t := range inputs {
		if t == nil {
			b = append(b, '-')
		} else {
			for _, d := range t.Shape {
				b = strconv.AppendInt(b, d, 10)
				b = append(b, ',')
			}
		}
		b = append(b, ';')
	}
	return b
}

// lookup returns the remembered output shapes for key (nil: none).
func (m *shapeMemo) lookup(key []byte) []ort.Shape {
	if !m.active.Load() || m.off.Load() {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.shapes[string(key)]
}

// largeShapes returns the shapes of out's large outputs the memo may size
// (nil entries for the others), or nil when there is none.
func largeShapes(plans []outputPlan, out []ort.Value) []ort.Shape {
	var shapes []ort.Shape
	for i := range plans {
		if !plans[i].memoable() || isNil(out[i]) || elementCount(out[i])*int64(plans[i].dtype.Size()) < tensor.MinPooled {
			continue
		}
		if shapes == nil {
			shapes = make([]ort.Shape, len(plans))
		}
		shapes[i] = out[i].GetShape()
	}
	return shapes
}

// elementCount is the number of elements of a numeric tensor value (-1
// for other values), without copying anything: largeShapes runs after
// every run the memo did not size, and a value's GetShape allocates a
// copy of its shape, so it is read only for the outputs kept.
func elementCount(v ort.Value) int64 {
	switch x := v.(type) {
	case *ort.Tensor[float32]:
		return int64(len(x.GetData()))
	case *ort.Tensor[float64]:
		return int64(len(x.GetData()))
	case *ort.Tensor[int8]:
		return int64(len(x.GetData()))
	case *ort.Tensor[int16]:
		return int64(len(x.GetData()))
	case *ort.Tensor[int32]:
		return int64(len(x.GetData()))
	case *ort.Tensor[int64]:
		return int64(len(x.GetData()))
	case *ort.Tensor[uint8]:
		return int64(len(x.GetData()))
	case *ort.Tensor[uint16]:
		return int64(len(x.GetData()))
	case *ort.Tensor[uint32]:
		return int64(len(x.GetData()))
	case *ort.Tensor[uint64]:
		return int64(len(x.GetData()))
	case *ort.Tensor[bool]:
		return int64(len(x.GetData()))
	}
	return -1
}

// remember records shapes for key, unless key is known or the memo is
// full; it turns the memo on.
func (m *shapeMemo) remember(key []byte, shapes []ort.Shape) {
	m.active.Store(true)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, known := m.shapes[string(key)]; known || len(m.shapes) >= maxShapeKeys {
		return
	}
	if m.shapes == nil {
		m.shapes = make(map[string][]ort.Shape)
	}
	m.shapes[string(key)] = shapes
}

// missed records that a run sized from the memo failed and succeeded
// without it: the key is not sized again, and after maxShapeMisses the
// memo is off. It reports whether this miss turned it off.
func (m *shapeMemo) missed(key []byte) bool {
	m.mu.Lock()
	if m.shapes != nil {
		m.shapes[string(key)] = nil
	}
	m.mu.Unlock()
	return m.misses.Add(1) == maxShapeMisses && m.off.CompareAndSwap(false, true)
}
