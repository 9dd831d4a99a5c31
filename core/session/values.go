package session

import (
	"fmt"
	"reflect"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/tensor"
)

// toORT wraps a decoded tensor as an ONNX Runtime value. Numeric data is
// shared with t, not copied; t must stay alive until the value is destroyed.
func toORT(t *tensor.Tensor) (ort.Value, error) {
	if len(t.Shape) == 0 {
		return scalarToORT(t)
	}
	shape := ort.NewShape(t.Shape...)
	switch d := t.Data.(type) {
	case []float32:
		return ort.NewTensor(shape, d)
	case []float64:
		return ort.NewTensor(shape, d)
	case []int8:
		return ort.NewTensor(shape, d)
	case []int16:
		return ort.NewTensor(shape, d)
	case []int32:
		return ort.NewTensor(shape, d)
	case []int64:
		return ort.NewTensor(shape, d)
	case []uint8:
		return ort.NewTensor(shape, d)
	case []uint32:
		return ort.NewTensor(shape, d)
	case []uint64:
		return ort.NewTensor(shape, d)
	case []bool:
		return ort.NewTensor(shape, d)
	case []uint16:
		switch t.DType {
		case tensor.Float16, tensor.BFloat16:
			if len(d) == 0 {
				// ONNX Runtime takes an empty tensor with any buffer; the
				// Go binding wants at least one byte.
				return ort.NewCustomDataTensor(shape, make([]byte, 2), ortTypeOf(t.DType))
			}
			raw := unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), len(d)*2)
			return ort.NewCustomDataTensor(shape, raw, ortTypeOf(t.DType))
		default:
			return ort.NewTensor(shape, d)
		}
	case []string:
		return onnxrt.NewStringTensor(shape, d)
	}
	return nil, fmt.Errorf("unsupported tensor data %T", t.Data)
}

// scalarToORT wraps a rank-0 tensor. The Go binding has rank-0 values for
// the numeric and bool types only (ort.Scalar); float16, bfloat16 and string
// scalars go in as [1] tensors.
func scalarToORT(t *tensor.Tensor) (ort.Value, error) {
	if t.Len() != 1 {
		return nil, fmt.Errorf("a rank-0 value has one element, got %d", t.Len())
	}
	switch d := t.Data.(type) {
	case []float32:
		return ort.NewScalar(d[0])
	case []float64:
		return ort.NewScalar(d[0])
	case []int8:
		return ort.NewScalar(d[0])
	case []int16:
		return ort.NewScalar(d[0])
	case []int32:
		return ort.NewScalar(d[0])
	case []int64:
		return ort.NewScalar(d[0])
	case []uint8:
		return ort.NewScalar(d[0])
	case []uint16:
		if t.DType == tensor.Uint16 {
			return ort.NewScalar(d[0])
		}
	case []uint32:
		return ort.NewScalar(d[0])
	case []uint64:
		return ort.NewScalar(d[0])
	case []bool:
		return ort.NewScalar(d[0])
	}
	// No rank-0 value of this type in the binding: feed a one-element
	// [1] tensor, which ONNX Runtime accepts for an input declared rank 0.
	return toORT(&tensor.Tensor{DType: t.DType, Shape: []int64{1}, Data: t.Data})
}

// newScalar allocates a rank-0 output of element type dt (see hasScalar).
func newScalar(dt tensor.DType) (ort.Value, error) {
	switch dt {
	case tensor.Float32:
		return ort.NewEmptyScalar[float32]()
	case tensor.Float64:
		return ort.NewEmptyScalar[float64]()
	case tensor.Int8:
		return ort.NewEmptyScalar[int8]()
	case tensor.Int16:
		return ort.NewEmptyScalar[int16]()
	case tensor.Int32:
		return ort.NewEmptyScalar[int32]()
	case tensor.Int64:
		return ort.NewEmptyScalar[int64]()
	case tensor.Uint8:
		return ort.NewEmptyScalar[uint8]()
	case tensor.Uint16:
		return ort.NewEmptyScalar[uint16]()
	case tensor.Uint32:
		return ort.NewEmptyScalar[uint32]()
	case tensor.Uint64:
		return ort.NewEmptyScalar[uint64]()
	case tensor.Bool:
		return ort.NewEmptyScalar[bool]()
	}
	return nil, fmt.Errorf("no rank-0 %s values in the ONNX Runtime binding", dt)
}

// hasScalar reports whether newScalar can allocate dt.
func hasScalar(dt tensor.DType) bool {
	switch dt {
	case tensor.Float16, tensor.BFloat16, tensor.String, tensor.Invalid:
		return false
	}
	return true
}

// isNil reports whether v is nil or an interface holding a nil pointer:
// the Go binding returns typed nils (a nil *ort.Tensor[T] as an ort.Value)
// next to its errors, and stores them in the outputs of a failed run.
func isNil(v ort.Value) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// destroyValues releases every non-nil value and clears vs.
func destroyValues(vs []ort.Value) {
	for i, v := range vs {
		if !isNil(v) {
			_ = v.Destroy()
		}
		vs[i] = nil
	}
}

func scalarOf[T any](dt tensor.DType, v T) *tensor.Tensor {
	return &tensor.Tensor{DType: dt, Shape: []int64{}, Data: []T{v}}
}

// fromORT copies an ONNX Runtime tensor value into a tensor.Tensor.
func fromORT(v ort.Value) (*tensor.Tensor, error) {
	if isNil(v) {
		return nil, fmt.Errorf("output value is missing")
	}
	shape := []int64(v.GetShape())
	switch x := v.(type) {
	case *ort.Tensor[float32]:
		return &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[float64]:
		return &tensor.Tensor{DType: tensor.Float64, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[int8]:
		return &tensor.Tensor{DType: tensor.Int8, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[int16]:
		return &tensor.Tensor{DType: tensor.Int16, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[int32]:
		return &tensor.Tensor{DType: tensor.Int32, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[int64]:
		return &tensor.Tensor{DType: tensor.Int64, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[uint8]:
		return &tensor.Tensor{DType: tensor.Uint8, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[uint16]:
		return &tensor.Tensor{DType: tensor.Uint16, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[uint32]:
		return &tensor.Tensor{DType: tensor.Uint32, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[uint64]:
		return &tensor.Tensor{DType: tensor.Uint64, Shape: shape, Data: x.GetData()}, nil
	case *ort.Tensor[bool]:
		return &tensor.Tensor{DType: tensor.Bool, Shape: shape, Data: x.GetData()}, nil
	case *ort.Scalar[float32]:
		return scalarOf(tensor.Float32, x.GetData()), nil
	case *ort.Scalar[float64]:
		return scalarOf(tensor.Float64, x.GetData()), nil
	case *ort.Scalar[int8]:
		return scalarOf(tensor.Int8, x.GetData()), nil
	case *ort.Scalar[int16]:
		return scalarOf(tensor.Int16, x.GetData()), nil
	case *ort.Scalar[int32]:
		return scalarOf(tensor.Int32, x.GetData()), nil
	case *ort.Scalar[int64]:
		return scalarOf(tensor.Int64, x.GetData()), nil
	case *ort.Scalar[uint8]:
		return scalarOf(tensor.Uint8, x.GetData()), nil
	case *ort.Scalar[uint16]:
		return scalarOf(tensor.Uint16, x.GetData()), nil
	case *ort.Scalar[uint32]:
		return scalarOf(tensor.Uint32, x.GetData()), nil
	case *ort.Scalar[uint64]:
		return scalarOf(tensor.Uint64, x.GetData()), nil
	case *ort.Scalar[bool]:
		return scalarOf(tensor.Bool, x.GetData()), nil
	case *ort.StringTensor:
		if len(shape) == 0 {
			// GetContents sizes its result from the shape and reads
			// nothing (or panics) for a rank-0 tensor; read the one
			// element directly.
			s, err := x.GetElement(0)
			if err != nil {
				return nil, fmt.Errorf("read string output: %w", err)
			}
			return scalarOf(tensor.String, s), nil
		}
		s, err := onnxrt.Strings(x)
		if err != nil {
			return nil, fmt.Errorf("read string output: %w", err)
		}
		return &tensor.Tensor{DType: tensor.String, Shape: shape, Data: s}, nil
	case *ort.CustomDataTensor:
		dt := dtypeOf(ort.TensorElementDataType(x.DataType()))
		if dt != tensor.Float16 && dt != tensor.BFloat16 {
			return nil, fmt.Errorf("unsupported output element type %v", ort.TensorElementDataType(x.DataType()))
		}
		raw := x.GetData()
		n := ort.Shape(shape).FlattenedSize()
		if int64(len(raw)) < 2*n {
			return nil, fmt.Errorf("%s output has %d bytes for %d elements", dt, len(raw), n)
		}
		u := make([]uint16, n)
		for i := range u {
			u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		}
		return &tensor.Tensor{DType: dt, Shape: shape, Data: u}, nil
	}
	return nil, fmt.Errorf("unsupported output value %T", v)
}
