package oip

import "github.com/svc-dev/svc/core/tensor"

// datatypes maps each tensor element type to the protocol's name of it;
// string tensors are BYTES.
var datatypes = [...]string{
	tensor.Bool:     "BOOL",
	tensor.Uint8:    "UINT8",
	tensor.Uint16:   "UINT16",
	tensor.Uint32:   "UINT32",
	tensor.Uint64:   "UINT64",
	tensor.Int8:     "INT8",
	tensor.Int16:    "INT16",
	tensor.Int32:    "INT32",
	tensor.Int64:    "INT64",
	tensor.Float16:  "FP16",
	tensor.BFloat16: "BF16",
	tensor.Float32:  "FP32",
	tensor.Float64:  "FP64",
	tensor.String:   "BYTES",
}

// datatypeList is the protocol's datatypes, for messages.
const datatypeList = "BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES"

// Datatype is the protocol's name of d ("FP32", "BYTES", ...); "" for an
// invalid type.
func Datatype(d tensor.DType) string {
	if int(d) < len(datatypes) {
		return datatypes[d]
	}
	return ""
}

// ParseDatatype is the inverse of Datatype: the element type of a protocol
// name (exact case), false for any other string.
func ParseDatatype(s string) (tensor.DType, bool) {
	for d, name := range datatypes {
		if name != "" && name == s {
			return tensor.DType(d), true
		}
	}
	return tensor.Invalid, false
}
