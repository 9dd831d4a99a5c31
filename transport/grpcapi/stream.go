package grpcapi

import (
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// StreamPrefix begins the id of a stream's own sequence.
const StreamPrefix = "grpc-stream-"

// ReasonStreamClosed is what a stream's own sequence's later steps are
// told once its stream has closed.
const ReasonStreamClosed = "ended when its gRPC stream closed"

// ModelStreamInfer serves Triton's streaming RPC: each request on the
// stream is answered in order on the stream, a failed one by its
// error_message (the stream goes on). A request that names no
// sequence_id is a step of the stream's own sequence: the first starts
// it, sequence_end ends it (the next starts a new one), and the stream's
// close ends it. Requests may also name sequences of their own with
// sequence_id, as ModelInfer's do. When the server stops, the step under
// way finishes and the stream ends with UNAVAILABLE saying so.
func (s *Service) ModelStreamInfer(stream inference.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := stream.Context()
	reqs := make(chan *inference.ModelInferRequest)
	recvErr := make(chan error, 1)
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case reqs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	own := s.streams.Next()
	active := false
	defer func() {
		if active && s.opts.Sequences != nil {
			s.opts.Sequences.End(own, ReasonStreamClosed)
		}
	}()
	stopped := status.Error(codes.Unavailable, "the server is stopping: the stream ends, and the state of its sequences with it; start them again (sequence_start) on a server that runs")
	for {
		// Once the server stops, no step starts: stopping is looked at
		// before each request, as well as while waiting for one.
		select {
		case <-s.stopping:
			return stopped
		default:
		}
		select {
		case <-s.stopping:
			return stopped
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case r := <-reqs:
			implicit := false
			if _, named := r.GetParameters()[oip.ParamSequenceID]; !named {
				implicit = true
				if r.Parameters == nil {
					r.Parameters = map[string]*inference.InferParameter{}
				}
				r.Parameters[oip.ParamSequenceID] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: own}}
				if _, given := r.Parameters[oip.ParamSequenceStart]; !given && !active {
					r.Parameters[oip.ParamSequenceStart] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: true}}
				}
			}
			resp, err := s.ModelInfer(ctx, r)
			out := &inference.ModelStreamInferResponse{InferResponse: resp}
			if err != nil {
				out.ErrorMessage = status.Convert(err).Message()
			} else if implicit {
				active = !r.GetParameters()[oip.ParamSequenceEnd].GetBoolParam()
			}
			if err := stream.Send(out); err != nil {
				return err
			}
		}
	}
}
