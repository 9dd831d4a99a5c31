// Package grpcapi serves the Open Inference Protocol v2 over gRPC: the
// service inference.GRPCInferenceService of KServe's grpc_predict_v2.proto
// (server and model liveness, readiness and metadata, and ModelInfer with
// typed contents or raw_input_contents), the standard health service
// (grpc.health.v1) and server reflection, on its own port. It decodes
// requests, calls core's runner (so batching, the timeout and the limits
// are those of the HTTP frontends) and encodes the answers; it imports no
// other protocol. The generated code is in transport/grpc/inference.
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
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/grpc/inference"
)

// Platform is the model metadata's platform.
const Platform = "onnx_onnxv1"

// ServerName is the server metadata's name.
const ServerName = "svc"

// ServiceName is the inference service's full name, as the health service
// and reflection know it.
const ServiceName = "inference.GRPCInferenceService"

// Options configure a Service.
type Options struct {
	Model   *core.Model
	Version string
	// MaxElements caps the elements of a request's typed contents (0 =
	// none); MaxStringBytes the length of one BYTES element (0 = any).
	MaxElements    int64
	MaxStringBytes int
	Logger         *zap.Logger
}

// Service implements inference.GRPCInferenceServiceServer over the served
// model.
type Service struct {
	inference.UnimplementedGRPCInferenceServiceServer
	opts Options
	log  *zap.Logger
	view atomic.Pointer[view]
}

// outputInfo is one model output as the protocol sees it.
type outputInfo struct {
	name     string
	dtype    tensor.DType
	isTensor bool
	kind     core.ValueKind
}

// view is what the service derives from the loaded model, once.
type view struct {
	runner     core.Runner
	version    string
	specs      []tensor.Spec
	outputs    []outputInfo
	metadata   *inference.ModelMetadataResponse
	inputList  string
	outputList string
}

func (v *view) inputIndex(name string) int {
	for i := range v.specs {
		if v.specs[i].Name == name {
			return i
		}
	}
	return -1
}

func (v *view) outputIndex(name string) int {
	for i := range v.outputs {
		if v.outputs[i].name == name {
			return i
		}
	}
	return -1
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
	return &Service{opts: o, log: o.Logger}, nil
}

// Prepare derives the model metadata from the loaded model. It is a
// core.Preparer.
func (s *Service) Prepare(r core.Runner) error {
	info := r.Info()
	v := &view{runner: r, version: info.Version, specs: r.Specs()}
	meta := &inference.ModelMetadataResponse{Name: s.opts.Model.Name(), Versions: []string{info.Version}, Platform: Platform}
	var names []string
	for _, sp := range v.specs {
		names = append(names, sp.Name)
		if sp.DType.Valid() {
			meta.Inputs = append(meta.Inputs, &inference.ModelMetadataResponse_TensorMetadata{
				Name: sp.Name, Datatype: Datatype(sp.DType), Shape: metadataShape(sp.Shape)})
		}
	}
	v.inputList = listOrNone(names)
	names = nil
	for _, o := range info.Outputs {
		names = append(names, o.Name)
		dt, ok := tensor.ParseDType(o.Type)
		oi := outputInfo{name: o.Name, dtype: dt, kind: o.Kind, isTensor: ok && (o.Kind == core.KindTensor || o.Kind == "")}
		v.outputs = append(v.outputs, oi)
		if oi.isTensor {
			meta.Outputs = append(meta.Outputs, &inference.ModelMetadataResponse_TensorMetadata{
				Name: o.Name, Datatype: Datatype(dt), Shape: metadataShape(o.Shape)})
		}
	}
	v.outputList = listOrNone(names)
	v.metadata = meta
	s.view.Store(v)
	return nil
}

// metadataShape is a shape for the metadata: -1 for dynamic dimensions; an
// input of unknown rank is [-1].
func metadataShape(sh []int64) []int64 {
	if sh == nil {
		return []int64{-1}
	}
	out := make([]int64, len(sh))
	for i, d := range sh {
		out[i] = max(d, -1)
	}
	return out
}

// ready reports whether the model takes new traffic.
func (s *Service) ready() bool {
	return s.opts.Model.Ready() && s.view.Load() != nil
}

// model checks a request's model name and version and returns the view:
// NotFound for another name or version, Unavailable while the model
// cannot serve.
func (s *Service) model(name, version string) (*view, error) {
	want := s.opts.Model.Name()
	if name == "" {
		return nil, invalid("model_name is missing; this server serves '%s'", want)
	}
	if name != want {
		return nil, notFound("Unknown model '%s'; this server serves '%s'", transport.Quote(name), want)
	}
	if _, err := s.opts.Model.Runner(); err != nil {
		return nil, err
	}
	v := s.view.Load()
	if v == nil {
		return nil, &core.NotReadyError{Model: want, State: core.StateLoading}
	}
	if version != "" && version != v.version {
		return nil, notFound("Unknown version '%s' of model '%s'; it has version '%s'", transport.Quote(version), want, v.version)
	}
	return v, nil
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
		return nil, invalid("name is missing; this server serves '%s'", want)
	}
	if r.GetName() != want {
		return nil, notFound("Unknown model '%s'; this server serves '%s'", transport.Quote(r.GetName()), want)
	}
	if v := s.view.Load(); v != nil && r.GetVersion() != "" && r.GetVersion() != v.version {
		return nil, notFound("Unknown version '%s' of model '%s'; it has version '%s'", transport.Quote(r.GetVersion()), want, v.version)
	}
	return &inference.ModelReadyResponse{Ready: s.ready()}, nil
}

// ServerMetadata names the server, its version and extensions (none).
func (s *Service) ServerMetadata(context.Context, *inference.ServerMetadataRequest) (*inference.ServerMetadataResponse, error) {
	return &inference.ServerMetadataResponse{Name: ServerName, Version: s.opts.Version, Extensions: []string{}}, nil
}

// ModelMetadata describes the model's tensor inputs and outputs.
func (s *Service) ModelMetadata(_ context.Context, r *inference.ModelMetadataRequest) (*inference.ModelMetadataResponse, error) {
	v, err := s.model(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, s.fail("ModelMetadata", err)
	}
	return v.metadata, nil
}

// ModelInfer runs one inference.
func (s *Service) ModelInfer(ctx context.Context, r *inference.ModelInferRequest) (resp *inference.ModelInferResponse, err error) {
	start := s.opts.Model.BeginRequest()
	outcome := core.OutcomeInference // if infer panics, the request still ends
	defer func() { s.opts.Model.EndRequest(start, outcome) }()
	resp, err = s.infer(ctx, r)
	outcome = outcomeOf(err)
	if err != nil {
		return nil, s.fail("ModelInfer", err)
	}
	return resp, nil
}

func (s *Service) infer(ctx context.Context, r *inference.ModelInferRequest) (*inference.ModelInferResponse, error) {
	v, err := s.model(r.GetModelName(), r.GetModelVersion())
	if err != nil {
		return nil, err
	}
	req, err := decodeRequest(r, v, s.opts.MaxElements, s.opts.MaxStringBytes)
	if err != nil {
		return nil, err
	}
	res, err := v.runner.Predict(ctx, req.inputs)
	// The run is over and no output shares the inputs' storage: it goes
	// back to the tensor pools before the response is encoded.
	tensor.RecycleAll(req.inputs)
	if err != nil {
		return nil, err
	}
	// The response holds copies of the outputs, so their storage goes
	// back to the pools.
	defer res.Release()
	out, err := encodeResponse(r, v, req, res)
	if err != nil {
		s.log.Error("encode gRPC outputs", zap.Error(err))
		return nil, &core.InferenceError{Err: err}
	}
	return out, nil
}
