package grpcapi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/datatype"
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

// Datatype is the protocol's name of d ("FP32", "BYTES", ...); "" for an
// invalid type.
func Datatype(d tensor.DType) string { return datatype.Name(d) }

// ParseDatatype is the inverse of Datatype.
func ParseDatatype(s string) (tensor.DType, bool) { return datatype.Parse(s) }

const datatypeList = datatype.List

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
