package core

import (
	"fmt"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

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
				return nil, fmt.Errorf("empty %s tensors are not supported", t.DType)
			}
			raw := unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), len(d)*2)
			return ort.NewCustomDataTensor(shape, raw, ortTypeOf(t.DType))
		default:
			return ort.NewTensor(shape, d)
		}
	case []string:
		st, err := ort.NewStringTensor(shape)
		if err != nil {
			return nil, err
		}
		if err := st.SetContents(d); err != nil {
			_ = st.Destroy()
			return nil, err
		}
		return st, nil
	}
	return nil, fmt.Errorf("unsupported tensor data %T", t.Data)
}

func scalarToORT(t *tensor.Tensor) (ort.Value, error) {
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
	return nil, fmt.Errorf("rank-0 %s inputs are not supported", t.DType)
}

// fromORT copies an ONNX Runtime tensor value into a tensor.Tensor.
func fromORT(v ort.Value) (*tensor.Tensor, error) {
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
		return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{}, Data: []float32{x.GetData()}}, nil
	case *ort.StringTensor:
		s, err := x.GetContents()
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
