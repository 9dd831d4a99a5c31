package session

import (
	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

var ortToDType = map[ort.TensorElementDataType]tensor.DType{
	ort.TensorElementDataTypeFloat:    tensor.Float32,
	ort.TensorElementDataTypeDouble:   tensor.Float64,
	ort.TensorElementDataTypeFloat16:  tensor.Float16,
	ort.TensorElementDataTypeBFloat16: tensor.BFloat16,
	ort.TensorElementDataTypeInt8:     tensor.Int8,
	ort.TensorElementDataTypeInt16:    tensor.Int16,
	ort.TensorElementDataTypeInt32:    tensor.Int32,
	ort.TensorElementDataTypeInt64:    tensor.Int64,
	ort.TensorElementDataTypeUint8:    tensor.Uint8,
	ort.TensorElementDataTypeUint16:   tensor.Uint16,
	ort.TensorElementDataTypeUint32:   tensor.Uint32,
	ort.TensorElementDataTypeUint64:   tensor.Uint64,
	ort.TensorElementDataTypeBool:     tensor.Bool,
	ort.TensorElementDataTypeString:   tensor.String,
}

// dtypeOf maps an ONNX Runtime element type to ours (Invalid if unsupported).
func dtypeOf(t ort.TensorElementDataType) tensor.DType { return ortToDType[t] }

// dtypeToORT is ortToDType inverted.
var dtypeToORT = func() map[tensor.DType]ort.TensorElementDataType {
	m := make(map[tensor.DType]ort.TensorElementDataType, len(ortToDType))
	for k, v := range ortToDType {
		m[v] = k
	}
	return m
}()

// ortTypeOf maps our element type back (Undefined if unknown).
func ortTypeOf(d tensor.DType) ort.TensorElementDataType { return dtypeToORT[d] }
