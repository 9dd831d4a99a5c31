package grpcapi

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// Client calls the gRPC service of an svc (or any Open Inference Protocol
// server) over plain-text HTTP/2.
type Client struct {
	conn   *grpc.ClientConn
	svc    inference.GRPCInferenceServiceClient
	health grpc_health_v1.HealthClient
	key    string
}

// ClientOption configures a Client.
type ClientOption func(*clientConfig)

type clientConfig struct {
	key     string
	maxRecv int
}

// WithAPIKey sends key as "authorization: Bearer <key>" on every call.
func WithAPIKey(key string) ClientOption { return func(c *clientConfig) { c.key = key } }

// WithMaxReceive raises the largest response the client accepts (gRPC's
// default is 4 MiB).
func WithMaxReceive(n int) ClientOption { return func(c *clientConfig) { c.maxRecv = n } }

// NewClient returns a client of the server at addr (host:port). It
// connects lazily, on the first call.
func NewClient(addr string, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{maxRecv: 1 << 30}
	for _, o := range opts {
		o(&cfg)
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.maxRecv)),
		grpc.WithInitialWindowSize(windowBytes), grpc.WithInitialConnWindowSize(windowBytes))
	if err != nil {
		return nil, fmt.Errorf("grpc client for %s: %w", addr, err)
	}
	return &Client{
		conn:   conn,
		svc:    inference.NewGRPCInferenceServiceClient(conn),
		health: grpc_health_v1.NewHealthClient(conn),
		key:    cfg.key,
	}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the client's connection, for other services' clients.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

func (c *Client) ctx(ctx context.Context) context.Context {
	if c.key == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.key)
}

// Service is the inference service's generated client; its calls carry
// no API key unless the context does (see Client's own methods).
func (c *Client) Service() inference.GRPCInferenceServiceClient { return c.svc }

// Infer runs ModelInfer.
func (c *Client) Infer(ctx context.Context, req *inference.ModelInferRequest) (*inference.ModelInferResponse, error) {
	return c.svc.ModelInfer(c.ctx(ctx), req)
}

// ServerLive runs ServerLive.
func (c *Client) ServerLive(ctx context.Context) (bool, error) {
	r, err := c.svc.ServerLive(c.ctx(ctx), &inference.ServerLiveRequest{})
	return r.GetLive(), err
}

// ServerReady runs ServerReady.
func (c *Client) ServerReady(ctx context.Context) (bool, error) {
	r, err := c.svc.ServerReady(c.ctx(ctx), &inference.ServerReadyRequest{})
	return r.GetReady(), err
}

// ModelReady runs ModelReady.
func (c *Client) ModelReady(ctx context.Context, model, version string) (bool, error) {
	r, err := c.svc.ModelReady(c.ctx(ctx), &inference.ModelReadyRequest{Name: model, Version: version})
	return r.GetReady(), err
}

// ServerMetadata runs ServerMetadata.
func (c *Client) ServerMetadata(ctx context.Context) (*inference.ServerMetadataResponse, error) {
	return c.svc.ServerMetadata(c.ctx(ctx), &inference.ServerMetadataRequest{})
}

// ModelMetadata runs ModelMetadata.
func (c *Client) ModelMetadata(ctx context.Context, model, version string) (*inference.ModelMetadataResponse, error) {
	return c.svc.ModelMetadata(c.ctx(ctx), &inference.ModelMetadataRequest{Name: model, Version: version})
}

// Health asks the health service about service ("" for the server).
func (c *Client) Health(ctx context.Context, service string) (grpc_health_v1.HealthCheckResponse_ServingStatus, error) {
	r, err := c.health.Check(c.ctx(ctx), &grpc_health_v1.HealthCheckRequest{Service: service})
	return r.GetStatus(), err
}

// Input is one named input tensor of RawRequest.
type Input struct {
	Name   string
	Tensor *tensor.Tensor
}

// RawRequest builds a ModelInferRequest for model with every input in
// raw_input_contents (so the outputs come back raw too).
func RawRequest(model string, inputs ...Input) *inference.ModelInferRequest {
	r := &inference.ModelInferRequest{ModelName: model}
	for _, in := range inputs {
		r.Inputs = append(r.Inputs, &inference.ModelInferRequest_InferInputTensor{
			Name: in.Name, Datatype: oip.Datatype(in.Tensor.DType), Shape: in.Tensor.Shape})
		r.RawInputContents = append(r.RawInputContents, tensor.AppendRaw(nil, in.Tensor))
	}
	return r
}

// Outputs decodes a response's outputs, from raw_output_contents or typed
// contents, in the response's order.
func Outputs(r *inference.ModelInferResponse) ([]*tensor.Tensor, error) {
	raw := r.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(r.GetOutputs()) {
		return nil, fmt.Errorf("response has %d outputs and %d raw_output_contents", len(r.GetOutputs()), len(raw))
	}
	out := make([]*tensor.Tensor, len(r.GetOutputs()))
	for i, o := range r.GetOutputs() {
		dt, ok := oip.ParseDatatype(o.GetDatatype())
		if !ok {
			return nil, fmt.Errorf("output '%s': unknown datatype '%s'", o.GetName(), o.GetDatatype())
		}
		count, cerr := tensorjson.ElementCount(o.GetName(), o.GetShape())
		if cerr != nil {
			return nil, fmt.Errorf("output '%s': %s", o.GetName(), cerr.Message)
		}
		t := &tensor.Tensor{DType: dt, Shape: o.GetShape()}
		var err error
		if len(raw) > 0 {
			t.Data, err = tensor.DecodeRaw(dt, count, raw[i], 0)
		} else {
			spec := &tensor.Spec{Name: o.GetName(), DType: dt}
			t.Data, err = typedContents(spec, o.GetShape(), o.GetContents(), count, 0)
		}
		if err != nil {
			return nil, fmt.Errorf("output '%s': %w", o.GetName(), err)
		}
		out[i] = t
	}
	return out, nil
}
