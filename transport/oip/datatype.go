package oip

import (
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/datatype"
)

// Datatype is the protocol's name of d ("FP32", "BYTES", ...); "" for an
// invalid type.
func Datatype(d tensor.DType) string { return datatype.Name(d) }

// ParseDatatype is the inverse of Datatype.
func ParseDatatype(s string) (tensor.DType, bool) { return datatype.Parse(s) }

// datatypeList is the protocol's datatypes, for messages.
const datatypeList = datatype.List
