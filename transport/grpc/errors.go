package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// invalid is a request the protocol refuses (InvalidArgument).
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func notFound(format string, args ...any) error {
	return status.Errorf(codes.NotFound, format, args...)
}

// toStatus maps an error of this package or of core to its gRPC status:
// the one place they meet gRPC codes. known is false for an unexpected
// error, which the caller logs.
func toStatus(err error) (st *status.Status, known bool) {
	var (
		timeout  *core.TimeoutError
		infer    *core.InferenceError
		notReady *core.NotReadyError
	)
	if s, ok := status.FromError(err); ok {
		return s, true
	}
	switch {
	case errors.As(err, &notReady):
		return status.New(codes.Unavailable, notReady.Error()), true
	case errors.As(err, &timeout):
		return status.New(codes.DeadlineExceeded, timeout.Error()), true
	case errors.As(err, &infer):
		return status.New(codes.Internal, infer.Error()), true
	case errors.Is(err, core.ErrCanceled), errors.Is(err, context.Canceled):
		return status.New(codes.Unavailable, "Request canceled before inference finished"), true
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, "The call's deadline passed before inference finished"), true
	}
	return status.New(codes.Internal, "Inference failed: "+err.Error()), false
}

// outcomeOf classifies an inference's end for the run observer.
func outcomeOf(err error) core.Outcome {
	if err == nil {
		return core.OutcomeSuccess
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.InvalidArgument, codes.NotFound, codes.ResourceExhausted, codes.Unauthenticated:
			return core.OutcomeBadRequest
		case codes.Unavailable:
			return core.OutcomeNotReady
		}
	}
	return core.OutcomeOf(err)
}

// datatypes maps each element type to its Open Inference Protocol name;
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

// Datatype is the protocol's name of d ("FP32", "BYTES", ...); "" for an
// invalid type.
func Datatype(d tensor.DType) string {
	if int(d) < len(datatypes) {
		return datatypes[d]
	}
	return ""
}

// ParseDatatype is the inverse of Datatype.
func ParseDatatype(s string) (tensor.DType, bool) {
	for d, name := range datatypes {
		if name != "" && name == s {
			return tensor.DType(d), true
		}
	}
	return tensor.Invalid, false
}

const datatypeList = "BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES"

func formatShape(s []int64) string {
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return string(append(b, ']'))
}

// clip shortens client-supplied text quoted in a message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "..."
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("'%s'", n)
	}
	return out
}
