package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/oip"
)

// invalid is a request the protocol refuses for what this codec reads
// (InvalidArgument).
func invalid(format string, args ...any) error {
	return oip.Errorf(oip.KindInvalid, format, args...)
}

// kindCode is the gRPC code of each kind of refusal.
func kindCode(k oip.Kind) codes.Code {
	switch k {
	case oip.KindInvalid:
		return codes.InvalidArgument
	case oip.KindNotFound:
		return codes.NotFound
	case oip.KindTooLarge, oip.KindExhausted:
		return codes.ResourceExhausted
	case oip.KindUnavailable:
		return codes.Unavailable
	}
	return codes.Internal
}

// toStatus maps a refusal of the protocol or an error of core to its gRPC
// status: the one place they meet gRPC codes. known is false for an
// unexpected error, which the caller logs.
func toStatus(err error) (st *status.Status, known bool) {
	var (
		own      *oip.Error
		timeout  *core.TimeoutError
		infer    *core.InferenceError
		notReady *core.NotReadyError
		input    *core.InputError
		limit    *core.LimitError
		busy     *core.BusyError
	)
	switch {
	case errors.As(err, &own):
		return status.New(kindCode(own.Kind), own.Message), true
	case errors.As(err, &input):
		return status.New(codes.InvalidArgument, input.Message), true
	case errors.As(err, &limit):
		return status.New(codes.ResourceExhausted, limit.Message), true
	case errors.As(err, &busy):
		return status.New(codes.Unavailable, busy.Message), true
	case errors.As(err, &notReady):
		return status.New(codes.Unavailable, notReady.Error()), true
	case errors.As(err, &timeout):
		return status.New(codes.DeadlineExceeded, timeout.Error()), true
	case errors.As(err, &infer):
		return status.New(codes.Internal, infer.Error()), true
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, "The call's deadline passed before inference finished"), true
	case errors.Is(err, core.ErrCanceled), errors.Is(err, context.Canceled):
		return status.New(codes.Unavailable, "Request canceled before inference finished"), true
	}
	return status.New(codes.Internal, "Inference failed: "+err.Error()), false
}

// outcomeOf classifies an inference's end for the run observer: the
// protocol's refusals are bad requests, or not ready when the model
// cannot serve; core's errors say what they are.
func outcomeOf(err error) core.Outcome {
	if err == nil {
		return core.OutcomeSuccess
	}
	var own *oip.Error
	if errors.As(err, &own) {
		if own.Kind == oip.KindUnavailable {
			return core.OutcomeNotReady
		}
		return core.OutcomeBadRequest
	}
	return core.OutcomeOf(err)
}

// Datatype is the protocol's name of d ("FP32", "BYTES", ...); "" for an
// invalid type. It is oip.Datatype.
func Datatype(d tensor.DType) string { return oip.Datatype(d) }
