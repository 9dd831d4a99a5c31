// Package grpcapi serves the Open Inference Protocol v2 over gRPC: the
// service inference.GRPCInferenceService of KServe's grpc_predict_v2.proto
// (server and model liveness, readiness and metadata, and ModelInfer with
// typed contents or raw_input_contents), the standard health service
// (grpc.health.v1) and server reflection, on its own port. It is a codec
// over the protocol's model in transport/oip: it converts protobuf
// requests to oip.Request (whose checks and messages are those of REST),
// calls core's runner (so batching, the timeout and the limits are those
// of the HTTP frontends) and converts the outputs back; it imports no
// other protocol. The generated code is in transport/grpcapi/inference.
//
// Choices where the protocol leaves room:
//
//   - The request's parameters are returned, as sent, as the response's
//     parameters; its id is echoed.
//   - Outputs come back in raw_output_contents when the request sent its
//     inputs in raw_input_contents, when it sets the request parameter
//     binary_data_output to true, or when an output returned is FP16 or
//     BF16 (which have no typed contents field); otherwise in typed
//     contents.
//   - raw_input_contents is all or nothing: one entry per input, in the
//     order of inputs, and then no input has contents.
//   - limits.max_elements caps the elements of a request's typed contents
//     (ResourceExhausted), as it caps the JSON values of a REST request;
//     raw contents are bounded by limits.max_body_size, which is the
//     largest message the server receives.
//   - An empty model_version means the model's version; another version
//     than the model's is NotFound, like another model name.
//   - ModelReady answers ready false while the model loads, warms up or
//     drains; ModelMetadata is Unavailable until the model has loaded.
package grpcapi

import (
	"context"
	"errors"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/repository"
)

// ServiceName is the inference service's full name, as the health service
// and reflection know it.
const ServiceName = "inference.GRPCInferenceService"

// Options configure a Service.
type Options struct {
	Model   *core.Model
	Version string
	// Limits are the request limits: the elements of a request's typed
	// contents, a BYTES element, the timeout parameter's bound (the
	// largest message is the server's, ServerOptions.MaxMessageBytes).
	Limits transport.Limits
	// Codec is what svc.yml declares for the model's inputs and outputs;
	// nil declares nothing.
	Codec *codec.Codec
	// Sequences keeps the state of sequences (nil: none).
	Sequences *seq.Store
	// Repository serves the model-repository RPCs (nil: Unimplemented).
	Repository *repository.Handler
	// Memory is the server-wide budget of request memory (nil: none).
	Memory *budget.Memory
	Logger *zap.Logger
}

// Service implements inference.GRPCInferenceServiceServer over the served
// model.
type Service struct {
	inference.UnimplementedGRPCInferenceServiceServer
	opts Options
	log  *zap.Logger
	// stopping is closed when the server stops: streams end (stream.go).
	stopping <-chan struct{}
	// streams names the streams' own sequences, apart from every other
	// process's (seq.IDs).
	streams *seq.IDs
	life    *transport.Inferences
}

// view is the protocol's view of the loaded model with its metadata as
// the service answers it.
type view struct {
	*oip.View
	metadata *inference.ModelMetadataResponse
}

// NewService returns the service; the model may still be loading (Prepare
// is called once it has loaded).
func NewService(o Options) (*Service, error) {
	if o.Model == nil {
		return nil, errors.New("grpcapi: no model")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Version == "" {
		o.Version = "unknown"
	}
	o.Limits = o.Limits.Resolved()
	return &Service{opts: o, log: o.Logger, streams: seq.NewIDs(StreamPrefix),
		life: &transport.Inferences{Model: o.Model, Memory: o.Memory, Limits: o.Limits}}, nil
}

// Prepare derives the model metadata from a loaded generation of the
// model. It is a core.Preparer.
func (s *Service) Prepare(r core.Runner) (any, error) {
	media, err := s.opts.Codec.For(r)
	if err != nil {
		return nil, err
	}
	v := &view{View: oip.NewView(r, media)}
	v.SetSequences(s.opts.Sequences)
	meta := v.Metadata(s.opts.Model.Name())
	v.metadata = &inference.ModelMetadataResponse{Name: meta.Name, Versions: meta.Versions, Platform: meta.Platform,
		Inputs: tensorMetadata(meta.Inputs), Outputs: tensorMetadata(meta.Outputs)}
	return v, nil
}

// tensorMetadata converts the protocol's tensor metadata to protobuf.
func tensorMetadata(in []oip.TensorMetadata) []*inference.ModelMetadataResponse_TensorMetadata {
	var out []*inference.ModelMetadataResponse_TensorMetadata
	for _, t := range in {
		out = append(out, &inference.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	return out
}

// ready reports whether the model takes new traffic.
func (s *Service) ready() bool {
	_, prepared := core.ViewOf[*view](s.opts.Model.Current())
	return s.opts.Model.Ready() && prepared
}

// model checks a request's model name and version and returns the view
// of the generation the request runs on, held until the caller releases
// it: NotFound for another name or version, Unavailable while the model
// cannot serve.
func (s *Service) model(name, version string) (*view, *core.Generation, error) {
	want := s.opts.Model.Name()
	if name == "" {
		return nil, nil, invalid("model_name is missing; this server serves '%s'", want)
	}
	if name != want {
		return nil, nil, oip.UnknownModel(name, want)
	}
	g, err := s.opts.Model.Acquire()
	if err != nil {
		return nil, nil, err
	}
	v, ok := core.ViewOf[*view](g)
	if !ok {
		g.Release()
		return nil, nil, &core.NotReadyError{Model: want, State: core.StateLoading}
	}
	if version != "" && version != v.Version() {
		g.Release()
		return nil, nil, oip.UnknownVersion(version, want, v.Version())
	}
	return v, g, nil
}

// fail turns err into the call's status, logging unexpected errors.
func (s *Service) fail(method string, err error) error {
	st, known := toStatus(err)
	if !known {
		s.log.Error("grpc "+method, zap.Error(err))
	}
	return st.Err()
}

// ServerLive answers live as soon as the server serves.
func (s *Service) ServerLive(context.Context, *inference.ServerLiveRequest) (*inference.ServerLiveResponse, error) {
	return &inference.ServerLiveResponse{Live: true}, nil
}

// ServerReady is true once the model is ready, false while it loads, warms
// up or drains.
func (s *Service) ServerReady(context.Context, *inference.ServerReadyRequest) (*inference.ServerReadyResponse, error) {
	return &inference.ServerReadyResponse{Ready: s.ready()}, nil
}

// ModelReady is ServerReady for the named model; another name is NotFound.
func (s *Service) ModelReady(_ context.Context, r *inference.ModelReadyRequest) (*inference.ModelReadyResponse, error) {
	want := s.opts.Model.Name()
	if r.GetName() == "" {
		return nil, s.fail("ModelReady", invalid("name is missing; this server serves '%s'", want))
	}
	if r.GetName() != want {
		return nil, s.fail("ModelReady", oip.UnknownModel(r.GetName(), want))
	}
	if v, ok := core.ViewOf[*view](s.opts.Model.Current()); ok && r.GetVersion() != "" && r.GetVersion() != v.Version() {
		return nil, s.fail("ModelReady", oip.UnknownVersion(r.GetVersion(), want, v.Version()))
	}
	return &inference.ModelReadyResponse{Ready: s.ready()}, nil
}

// ServerMetadata names the server, its version and the protocol's
// extensions it serves over gRPC: sequences (their parameters and
// ModelStreamInfer) and, when it has it, the model repository.
func (s *Service) ServerMetadata(context.Context, *inference.ServerMetadataRequest) (*inference.ServerMetadataResponse, error) {
	ext := []string{oip.ExtensionSequence}
	if s.opts.Repository != nil {
		ext = append(ext, oip.ExtensionModelRepository)
	}
	return &inference.ServerMetadataResponse{Name: oip.ServerName, Version: s.opts.Version, Extensions: ext}, nil
}

// ModelMetadata describes the model's tensor inputs and outputs.
func (s *Service) ModelMetadata(_ context.Context, r *inference.ModelMetadataRequest) (*inference.ModelMetadataResponse, error) {
	v, g, err := s.model(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, s.fail("ModelMetadata", err)
	}
	g.Release()
	return v.metadata, nil
}

// ModelInfer runs one inference.
func (s *Service) ModelInfer(ctx context.Context, r *inference.ModelInferRequest) (resp *inference.ModelInferResponse, err error) {
	q := s.life.Begin(ctx)
	defer q.End()
	resp, err = s.infer(q, r)
	q.Outcome = outcomeOf(err)
	if err != nil {
		return nil, s.fail("ModelInfer", err)
	}
	return resp, nil
}

func (s *Service) infer(q *transport.Inference, r *inference.ModelInferRequest) (*inference.ModelInferResponse, error) {
	v, g, err := s.model(r.GetModelName(), r.GetModelVersion())
	if err != nil {
		return nil, err
	}
	// The message is in: what decoding it makes is reserved (the
	// response holds copies of the outputs, until the request ends).
	if err := q.ReserveBody(int64(proto.Size(r)), 0); err != nil {
		return nil, err
	}
	ctx := q.Ctx
	began := core.TraceStart(ctx)
	// The response holds copies of the outputs: the generation may close
	// once it is encoded.
	defer g.Release()
	req, err := decodeRequest(r, v, s.opts.Limits.MaxElements, s.opts.Limits.MaxStringBytes)
	if err != nil {
		return nil, err
	}
	req.BeginTrace(began)
	md, _ := metadata.FromIncomingContext(ctx)
	req.BypassCache(transport.NoCache(md.Get(transport.CacheControlMetadata)))
	res, err := v.Run(q, &req, s.opts.Limits.MaxStringBytes)
	if err != nil {
		return nil, err
	}
	if st := req.CacheStatus().Header(); st != "" {
		_ = grpc.SetHeader(ctx, metadata.Pairs(transport.CacheMetadata, st))
	}
	defer core.TraceStep(ctx, core.StepEncode, core.TraceStart(ctx), 0)
	// The response holds copies of the outputs, so their storage goes
	// back to the pools.
	defer res.Release()
	out, err := encodeResponse(r, v, &req, res)
	if err != nil {
		s.log.Error("encode gRPC outputs", zap.Error(err))
		return nil, &core.InferenceError{Err: err}
	}
	return out, nil
}
