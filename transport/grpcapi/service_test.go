package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/access"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// allDTypes are the element types the protocol carries, in datatype order.
var allDTypes = []tensor.DType{
	tensor.Bool, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64,
	tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64,
	tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64, tensor.String,
}

func dtName(d tensor.DType) string { return strings.ToLower(Datatype(d)) }

// echoRunner has one input per datatype, named after it in lower case
// ("fp32", "bytes", ...), of shape [-1, 2] ("fp32" required, the others
// optional), plus "image" FP32 [1, 3]; output "<input>_out" echoes each (an
// empty [0, 2] tensor when the input was not sent), then "scores", a
// sequence that the protocol cannot carry. err makes Predict fail; when
// block is set, Predict signals entered and waits for it to close.
type echoRunner struct {
	err     error
	entered chan struct{}
	block   chan struct{}
	mu      sync.Mutex
	last    []*tensor.Tensor
}

func (f *echoRunner) Specs() []tensor.Spec {
	var specs []tensor.Spec
	for _, d := range allDTypes {
		specs = append(specs, tensor.Spec{Name: dtName(d), DType: d, Shape: []int64{-1, 2}, Required: d == tensor.Float32})
	}
	return append(specs, tensor.Spec{Name: "image", DType: tensor.Float32, Shape: []int64{1, 3}})
}

func (f *echoRunner) Info() core.ModelInfo {
	info := core.ModelInfo{Name: "echo", Version: "7", Format: "onnx"}
	for _, s := range f.Specs() {
		info.Inputs = append(info.Inputs, core.InputSpec{Name: s.Name, Type: s.DType.String(), Shape: s.Shape, Required: s.Required, Kind: core.KindTensor})
		info.Outputs = append(info.Outputs, core.OutputSpec{Name: s.Name + "_out", Type: s.DType.String(), Shape: s.Shape, Kind: core.KindTensor})
	}
	info.Outputs = append(info.Outputs, core.OutputSpec{Name: "scores", Type: "seq(map(string,float32))", Kind: core.KindSequence})
	return info
}

func (f *echoRunner) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	f.mu.Lock()
	f.last = in
	f.mu.Unlock()
	if f.block != nil {
		close(f.entered)
		select {
		case <-f.block:
		case <-ctx.Done(): // as core's runners do
			return nil, core.ErrCanceled
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	var out []*tensor.Tensor
	for i, s := range f.Specs() {
		t := in[i]
		if t == nil {
			t = emptyTensor(s.DType)
		}
		out = append(out, t)
	}
	return core.NewResult(append(out, emptyTensor(tensor.Float32))), nil
}

func emptyTensor(d tensor.DType) *tensor.Tensor {
	t, _ := sampleN(d, 0)
	t.Shape = []int64{0, 2}
	return t
}

// sample is a [2, 2] tensor of d with recognisable values (the extremes
// of integer types) and the same values as typed contents.
func sample(d tensor.DType) (*tensor.Tensor, *inference.InferTensorContents) {
	return sampleN(d, 4)
}

func sampleN(d tensor.DType, n int) (*tensor.Tensor, *inference.InferTensorContents) {
	t := &tensor.Tensor{DType: d, Shape: []int64{2, 2}}
	c := &inference.InferTensorContents{}
	switch d {
	case tensor.Bool:
		v := []bool{true, false, false, true}[:n]
		t.Data, c.BoolContents = v, v
	case tensor.Uint8:
		t.Data, c.UintContents = []uint8{0, 1, 254, 255}[:n], []uint32{0, 1, 254, 255}[:n]
	case tensor.Uint16:
		t.Data, c.UintContents = []uint16{0, 1, 65534, 65535}[:n], []uint32{0, 1, 65534, 65535}[:n]
	case tensor.Uint32:
		v := []uint32{0, 1, 7, 4294967295}[:n]
		t.Data, c.UintContents = v, v
	case tensor.Uint64:
		v := []uint64{0, 1, 7, 18446744073709551615}[:n]
		t.Data, c.Uint64Contents = v, v
	case tensor.Int8:
		t.Data, c.IntContents = []int8{-128, -1, 0, 127}[:n], []int32{-128, -1, 0, 127}[:n]
	case tensor.Int16:
		t.Data, c.IntContents = []int16{-32768, -1, 0, 32767}[:n], []int32{-32768, -1, 0, 32767}[:n]
	case tensor.Int32:
		v := []int32{-2147483648, -1, 0, 2147483647}[:n]
		t.Data, c.IntContents = v, v
	case tensor.Int64:
		v := []int64{-9007199254740993, -1, 0, 9223372036854775807}[:n]
		t.Data, c.Int64Contents = v, v
	case tensor.Float16:
		t.Data, c = []uint16{0x3c00, 0xc100, 0x3800, 0x7bff}[:n], nil
	case tensor.BFloat16:
		t.Data, c = []uint16{0x3f80, 0xc020, 0x3f00, 0x4120}[:n], nil
	case tensor.Float32:
		v := []float32{1.5, -2, 0.1, 3e38}[:n]
		t.Data, c.Fp32Contents = v, v
	case tensor.Float64:
		v := []float64{1.5, -2, 0.1, 1e300}[:n]
		t.Data, c.Fp64Contents = v, v
	case tensor.String:
		v := []string{"a", "", "grüße", "\x00\xff"}[:n]
		t.Data = v
		for _, s := range v {
			c.BytesContents = append(c.BytesContents, []byte(s))
		}
	}
	return t, c
}

type fixture struct {
	client *Client
	model  *core.Model
	server *Server
	svc    *Service
}

// start serves a Service over a model that loads r (or stays loading when
// r is nil) on a local port, and returns a client of it.
func start(t testing.TB, r core.Runner, o Options, so ServerOptions, copts ...ClientOption) *fixture {
	t.Helper()
	m := core.NewModel("echo")
	o.Model = m
	if o.Version == "" {
		o.Version = "1.2.3"
	}
	svc, err := NewService(o)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{svc.Prepare}, nil, nil)
		<-m.Done()
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ln, svc, so)
	s.Start()
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	c, err := NewClient(ln.Addr().String(), copts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &fixture{client: c, model: m, server: s, svc: svc}
}

// fp32Input is the required input, typed.
func fp32Input() *inference.ModelInferRequest_InferInputTensor {
	_, c := sample(tensor.Float32)
	return &inference.ModelInferRequest_InferInputTensor{Name: "fp32", Datatype: "FP32", Shape: []int64{2, 2}, Contents: c}
}

func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("error %v is not a gRPC status", err)
	}
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got %v %q, want %v containing %q", st.Code(), st.Message(), code, msg)
	}
}

func TestServerAndModelRPCs(t *testing.T) {
	f := start(t, &echoRunner{}, Options{}, ServerOptions{})
	ctx := context.Background()
	if live, err := f.client.ServerLive(ctx); err != nil || !live {
		t.Fatalf("ServerLive = %v, %v", live, err)
	}
	if ready, err := f.client.ServerReady(ctx); err != nil || !ready {
		t.Fatalf("ServerReady = %v, %v", ready, err)
	}
	for _, version := range []string{"", "7"} {
		if ready, err := f.client.ModelReady(ctx, "echo", version); err != nil || !ready {
			t.Fatalf("ModelReady(%q) = %v, %v", version, ready, err)
		}
	}
	_, err := f.client.ModelReady(ctx, "other", "")
	wantCode(t, err, codes.NotFound, "Unknown model 'other'; this server serves 'echo'")
	_, err = f.client.ModelReady(ctx, "echo", "8")
	wantCode(t, err, codes.NotFound, "Unknown version '8' of model 'echo'; it has version '7'")
	_, err = f.client.ModelReady(ctx, "", "")
	wantCode(t, err, codes.InvalidArgument, "name is missing")

	sm, err := f.client.ServerMetadata(ctx)
	if err != nil || sm.GetName() != "svc" || sm.GetVersion() != "1.2.3" || fmt.Sprint(sm.GetExtensions()) != "[sequence]" {
		t.Fatalf("ServerMetadata = %v, %v", sm, err)
	}
	mm, err := f.client.ModelMetadata(ctx, "echo", "")
	if err != nil {
		t.Fatal(err)
	}
	if mm.GetName() != "echo" || !reflect.DeepEqual(mm.GetVersions(), []string{"7"}) || mm.GetPlatform() != "onnx_onnxv1" {
		t.Fatalf("ModelMetadata = %v", mm)
	}
	if len(mm.GetInputs()) != len(allDTypes)+1 || len(mm.GetOutputs()) != len(allDTypes)+1 {
		t.Fatalf("metadata has %d inputs, %d outputs; want %d each (the sequence output left out)", len(mm.GetInputs()), len(mm.GetOutputs()), len(allDTypes)+1)
	}
	for i, d := range allDTypes {
		in := mm.GetInputs()[i]
		if in.GetName() != dtName(d) || in.GetDatatype() != Datatype(d) || !reflect.DeepEqual(in.GetShape(), []int64{-1, 2}) {
			t.Errorf("input %d = %v", i, in)
		}
		if out := mm.GetOutputs()[i]; out.GetName() != dtName(d)+"_out" || out.GetDatatype() != Datatype(d) {
			t.Errorf("output %d = %v", i, out)
		}
	}
	_, err = f.client.ModelMetadata(ctx, "other", "")
	wantCode(t, err, codes.NotFound, "Unknown model 'other'")
	_, err = f.client.ModelMetadata(ctx, "echo", "x")
	wantCode(t, err, codes.NotFound, "Unknown version 'x' of model 'echo'")
}

// TestInferEveryDatatype sends each datatype typed (where the protocol has
// a field for it) and raw, and checks the echo in both forms.
func TestInferEveryDatatype(t *testing.T) {
	r := &echoRunner{}
	f := start(t, r, Options{}, ServerOptions{})
	ctx := context.Background()
	for _, d := range allDTypes {
		want, contents := sample(d)
		name := dtName(d)
		t.Run(name+"/raw", func(t *testing.T) {
			req := RawRequest("echo", Input{Name: name, Tensor: want})
			if d != tensor.Float32 {
				fp32, _ := sample(tensor.Float32)
				req = RawRequest("echo", Input{Name: "fp32", Tensor: fp32}, Input{Name: name, Tensor: want})
			}
			req.Id = "req-" + name
			req.Outputs = []*inference.ModelInferRequest_InferRequestedOutputTensor{{Name: name + "_out"}}
			resp, err := f.client.Infer(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetId() != "req-"+name || resp.GetModelName() != "echo" || resp.GetModelVersion() != "7" {
				t.Fatalf("response header = %q %q %q", resp.GetId(), resp.GetModelName(), resp.GetModelVersion())
			}
			if len(resp.GetRawOutputContents()) != 1 || resp.GetOutputs()[0].GetContents() != nil {
				t.Fatalf("raw request: want the output raw, got %v", resp)
			}
			got, err := Outputs(resp)
			if err != nil {
				t.Fatal(err)
			}
			if o := resp.GetOutputs()[0]; o.GetName() != name+"_out" || o.GetDatatype() != Datatype(d) {
				t.Fatalf("output = %v", o)
			}
			if !reflect.DeepEqual(got[0], want) {
				t.Fatalf("echo = %+v, want %+v", got[0], want)
			}
		})
		if contents == nil {
			continue // FP16 and BF16: raw only (see TestHalfTypes)
		}
		t.Run(name+"/typed", func(t *testing.T) {
			req := &inference.ModelInferRequest{ModelName: "echo", ModelVersion: "7",
				Parameters: map[string]*inference.InferParameter{"trace": {ParameterChoice: &inference.InferParameter_StringParam{StringParam: "x"}}}}
			in := &inference.ModelInferRequest_InferInputTensor{Name: name, Datatype: Datatype(d), Shape: []int64{2, 2}, Contents: contents}
			if d != tensor.Float32 {
				req.Inputs = append(req.Inputs, fp32Input())
			}
			req.Inputs = append(req.Inputs, in)
			resp, err := f.client.Infer(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetParameters()["trace"].GetStringParam() != "x" {
				t.Fatalf("parameters not echoed: %v", resp.GetParameters())
			}
			// No output named: every tensor output comes, FP16 and BF16
			// among them, which makes the answer raw.
			if len(resp.GetOutputs()) != len(allDTypes)+1 || len(resp.GetRawOutputContents()) != len(allDTypes)+1 {
				t.Fatalf("want %d raw outputs, got %d outputs, %d raw", len(allDTypes)+1, len(resp.GetOutputs()), len(resp.GetRawOutputContents()))
			}
			got, err := Outputs(resp)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range resp.GetOutputs() {
				if o.GetName() == name+"_out" {
					if !reflect.DeepEqual(got[i], want) {
						t.Fatalf("echo = %+v, want %+v", got[i], want)
					}
					return
				}
			}
			t.Fatalf("no %s_out in %v", name, resp.GetOutputs())
		})
	}
}

// TestTypedOutputs asks for typed outputs only (no half types among them)
// and compares the contents field by field.
func TestTypedOutputs(t *testing.T) {
	f := start(t, &echoRunner{}, Options{}, ServerOptions{})
	for _, d := range allDTypes {
		want, contents := sample(d)
		if contents == nil {
			continue
		}
		name := dtName(d)
		req := &inference.ModelInferRequest{ModelName: "echo"}
		if d != tensor.Float32 {
			req.Inputs = append(req.Inputs, fp32Input())
		}
		req.Inputs = append(req.Inputs, &inference.ModelInferRequest_InferInputTensor{Name: name, Datatype: Datatype(d), Shape: []int64{2, 2}, Contents: contents})
		req.Outputs = []*inference.ModelInferRequest_InferRequestedOutputTensor{{Name: name + "_out"}}
		resp, err := f.client.Infer(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(resp.GetRawOutputContents()) != 0 || len(resp.GetOutputs()) != 1 {
			t.Fatalf("%s: want one typed output, got %v", name, resp)
		}
		o := resp.GetOutputs()[0]
		if !reflect.DeepEqual(o.GetContents().GetBoolContents(), contents.GetBoolContents()) ||
			!reflect.DeepEqual(o.GetContents().GetIntContents(), contents.GetIntContents()) ||
			!reflect.DeepEqual(o.GetContents().GetUintContents(), contents.GetUintContents()) ||
			!reflect.DeepEqual(o.GetContents().GetFp64Contents(), contents.GetFp64Contents()) ||
			!reflect.DeepEqual(o.GetContents().GetBytesContents(), contents.GetBytesContents()) {
			t.Fatalf("%s: contents = %v, want %v", name, o.GetContents(), contents)
		}
		got, err := Outputs(resp)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[0], want) {
			t.Fatalf("%s: decoded %+v, want %+v", name, got[0], want)
		}
	}
}

// TestHalfTypes: FP16 and BF16 have no typed field; a typed request that
// gets one back gets every output raw.
func TestHalfTypes(t *testing.T) {
	f := start(t, &echoRunner{}, Options{}, ServerOptions{})
	req := &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()},
		Outputs: []*inference.ModelInferRequest_InferRequestedOutputTensor{{Name: "fp32_out"}, {Name: "fp16_out"}}}
	resp, err := f.client.Infer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRawOutputContents()) != 2 {
		t.Fatalf("want both outputs raw, got %v", resp)
	}
	got, err := Outputs(resp)
	if err != nil {
		t.Fatal(err)
	}
	fp32, _ := sample(tensor.Float32)
	if !reflect.DeepEqual(got[0], fp32) || got[1].Len() != 0 || got[1].DType != tensor.Float16 {
		t.Fatalf("outputs = %+v", got)
	}
	// binary_data_output asks for raw outputs from a typed request.
	req.Outputs = req.Outputs[:1]
	req.Parameters = map[string]*inference.InferParameter{ParamBinaryDataOutput: {ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: true}}}
	resp, err = f.client.Infer(context.Background(), req)
	if err != nil || len(resp.GetRawOutputContents()) != 1 {
		t.Fatalf("binary_data_output: %v, %v", resp, err)
	}
}

func TestInferErrors(t *testing.T) {
	f := start(t, &echoRunner{}, Options{Limits: transport.Limits{MaxElements: 100, MaxStringBytes: 8}}, ServerOptions{MaxMessageBytes: 64 << 10})
	typed := func(name, dt string, shape []int64, c *inference.InferTensorContents) *inference.ModelInferRequest {
		return &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{
			fp32Input(), {Name: name, Datatype: dt, Shape: shape, Contents: c}}}
	}
	fp32, _ := sample(tensor.Float32)
	raw := func(entries ...[]byte) *inference.ModelInferRequest {
		r := RawRequest("echo", Input{Name: "fp32", Tensor: fp32})
		r.RawInputContents = entries
		return r
	}
	withOutput := func(o *inference.ModelInferRequest_InferRequestedOutputTensor) *inference.ModelInferRequest {
		r := typed("fp64", "FP64", []int64{1, 2}, &inference.InferTensorContents{Fp64Contents: []float64{1, 2}})
		r.Outputs = []*inference.ModelInferRequest_InferRequestedOutputTensor{o}
		return r
	}
	param := func(k string, v *inference.InferParameter) map[string]*inference.InferParameter {
		return map[string]*inference.InferParameter{k: v}
	}
	strParam := &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: "x"}}
	tests := []struct {
		name string
		req  *inference.ModelInferRequest
		code codes.Code
		msg  string
	}{
		{"no model name", &inference.ModelInferRequest{}, codes.InvalidArgument, "model_name is missing; this server serves 'echo'"},
		{"unknown model", &inference.ModelInferRequest{ModelName: "resnet"}, codes.NotFound, "Unknown model 'resnet'; this server serves 'echo'"},
		{"unknown version", &inference.ModelInferRequest{ModelName: "echo", ModelVersion: "9"}, codes.NotFound, "Unknown version '9' of model 'echo'; it has version '7'"},
		{"no input name", typed("", "FP64", []int64{1, 2}, nil), codes.InvalidArgument, "Invalid inputs[1]: name is missing"},
		{"unknown input", typed("nope", "FP64", []int64{1, 2}, nil), codes.InvalidArgument, "Unknown input 'nope'; the model's inputs are: 'bool', 'uint8'"},
		{"duplicate input", typed("fp32", "FP32", []int64{2, 2}, fp32Input().Contents), codes.InvalidArgument, "Duplicate input 'fp32'"},
		{"no datatype", typed("fp64", "", []int64{1, 2}, nil), codes.InvalidArgument, "Input 'fp64': datatype is missing (the model takes FP64)"},
		{"bad datatype", typed("fp64", "FLOAT", []int64{1, 2}, nil), codes.InvalidArgument, "Invalid datatype 'FLOAT' for input 'fp64': expected one of BOOL, UINT8"},
		{"wrong datatype", typed("fp64", "FP32", []int64{1, 2}, nil), codes.InvalidArgument, "Invalid datatype for input 'fp64': the model takes FP64, got FP32"},
		{"wrong rank", typed("fp64", "FP64", []int64{2}, nil), codes.InvalidArgument, "Invalid shape for 'fp64': expected rank 2 [-1, 2], got rank 1 [2]"},
		{"wrong fixed dim", typed("image", "FP32", []int64{1, 4}, nil), codes.InvalidArgument, "Invalid shape for 'image': expected [1, 3], got [1, 4]"},
		{"negative dim", typed("fp64", "FP64", []int64{-1, 2}, nil), codes.InvalidArgument, "Invalid shape for 'fp64': [-1, 2] has a negative dimension"},
		{"no data", typed("fp64", "FP64", []int64{1, 2}, nil), codes.InvalidArgument, "Input 'fp64' has no data: send its 2 elements in contents.fp64_contents or raw_input_contents"},
		{"too few elements", typed("fp64", "FP64", []int64{2, 2}, &inference.InferTensorContents{Fp64Contents: []float64{1}}), codes.InvalidArgument, "Input 'fp64': shape [2, 2] takes 4 elements, contents.fp64_contents has 1"},
		{"wrong field", typed("fp64", "FP64", []int64{1, 2}, &inference.InferTensorContents{Fp32Contents: []float32{1, 2}}), codes.InvalidArgument, "Input 'fp64' is FP64: its elements go in contents.fp64_contents, got fp32_contents"},
		{"half typed", typed("fp16", "FP16", []int64{1, 2}, &inference.InferTensorContents{UintContents: []uint32{1, 2}}), codes.InvalidArgument, "Input 'fp16' is FP16, which has no typed contents field: send it in raw_input_contents"},
		{"int8 range", typed("int8", "INT8", []int64{1, 2}, &inference.InferTensorContents{IntContents: []int32{1, 128}}), codes.InvalidArgument, "Input 'int8': element 1 is 128, out of the range of INT8 (-128 to 127)"},
		{"uint16 range", typed("uint16", "UINT16", []int64{1, 2}, &inference.InferTensorContents{UintContents: []uint32{65536, 1}}), codes.InvalidArgument, "Input 'uint16': element 0 is 65536, out of the range of UINT16 (0 to 65535)"},
		{"long string", typed("bytes", "BYTES", []int64{1, 2}, &inference.InferTensorContents{BytesContents: [][]byte{[]byte("123456789"), nil}}), codes.InvalidArgument, "Input 'bytes': BYTES element 0 is 9 bytes long, over the limit of 8"},
		{"missing required", &inference.ModelInferRequest{ModelName: "echo"}, codes.InvalidArgument, "Missing required input: 'fp32'"},
		{"too many elements", typed("fp64", "FP64", []int64{50, 2}, &inference.InferTensorContents{Fp64Contents: make([]float64, 100)}), codes.ResourceExhausted, "Too many elements: the request's typed contents hold 104 values, over the limit of 100 (send large tensors in raw_input_contents)"},
		{"message too large", typed("uint8", "UINT8", []int64{40000, 2}, &inference.InferTensorContents{UintContents: make([]uint32, 80000)}), codes.ResourceExhausted, "larger than max"},
		{"raw entries", raw(), codes.InvalidArgument, ""}, // no raw: typed path, fp32 has no data
		{"raw count", raw(tensor.AppendRaw(nil, fp32), nil), codes.InvalidArgument, "raw_input_contents has 2 entries and the request has 1 inputs"},
		{"raw size", raw(make([]byte, 15)), codes.InvalidArgument, "Invalid raw_input_contents[0] for input 'fp32' (shape [2, 2] of FP32): 4 elements of float32 take 16 bytes, got 15"},
		{"raw and typed", func() *inference.ModelInferRequest {
			r := RawRequest("echo", Input{Name: "fp32", Tensor: fp32})
			r.Inputs[0].Contents = fp32Input().Contents
			return r
		}(), codes.InvalidArgument, "Input 'fp32' has contents, but the request sends raw_input_contents"},
		{"raw bool", func() *inference.ModelInferRequest {
			r := RawRequest("echo", Input{Name: "fp32", Tensor: fp32}, Input{Name: "bool", Tensor: &tensor.Tensor{DType: tensor.Bool, Shape: []int64{1, 2}, Data: []bool{true, false}}})
			r.RawInputContents[1] = []byte{1, 2}
			return r
		}(), codes.InvalidArgument, "Invalid raw_input_contents[1] for input 'bool' (shape [1, 2] of BOOL): bool element 1 is byte 2, expected 0 or 1"},
		{"raw bytes truncated", func() *inference.ModelInferRequest {
			r := RawRequest("echo", Input{Name: "fp32", Tensor: fp32}, Input{Name: "bytes", Tensor: &tensor.Tensor{DType: tensor.String, Shape: []int64{1, 2}, Data: []string{"ab", "c"}}})
			r.RawInputContents[1] = r.RawInputContents[1][:10]
			return r
		}(), codes.InvalidArgument, "string element 1 is 1 bytes long, past the end of the data"},
		{"raw long string", RawRequest("echo", Input{Name: "fp32", Tensor: fp32}, Input{Name: "bytes", Tensor: &tensor.Tensor{DType: tensor.String, Shape: []int64{1, 2}, Data: []string{"ab", "123456789"}}}),
			codes.InvalidArgument, "string element 1 is 9 bytes long, over the limit of 8"},
		{"shared memory", func() *inference.ModelInferRequest {
			r := typed("fp64", "FP64", []int64{1, 2}, &inference.InferTensorContents{Fp64Contents: []float64{1, 2}})
			r.Inputs[1].Parameters = param("shared_memory_region", strParam)
			return r
		}(), codes.InvalidArgument, "the shared-memory extension is not supported"},
		{"unknown output", withOutput(&inference.ModelInferRequest_InferRequestedOutputTensor{Name: "zz"}), codes.InvalidArgument, "Unknown output 'zz'; the model's outputs are: 'bool_out'"},
		{"sequence output", withOutput(&inference.ModelInferRequest_InferRequestedOutputTensor{Name: "scores"}), codes.InvalidArgument, "Output 'scores' is a sequence, not a tensor"},
		{"nameless output", withOutput(&inference.ModelInferRequest_InferRequestedOutputTensor{}), codes.InvalidArgument, "Invalid outputs[0]: name is missing"},
		{"classification", withOutput(&inference.ModelInferRequest_InferRequestedOutputTensor{Name: "fp64_out", Parameters: param("classification", &inference.InferParameter{ParameterChoice: &inference.InferParameter_Int64Param{Int64Param: 3}})}),
			codes.InvalidArgument, "the classification extension is not supported"},
		{"binary_data_output not bool", func() *inference.ModelInferRequest {
			r := typed("fp64", "FP64", []int64{1, 2}, &inference.InferTensorContents{Fp64Contents: []float64{1, 2}})
			r.Parameters = param(ParamBinaryDataOutput, strParam)
			return r
		}(), codes.InvalidArgument, "Invalid parameters.binary_data_output: expected a bool_param"},
	}
	dupOut := withOutput(&inference.ModelInferRequest_InferRequestedOutputTensor{Name: "fp64_out"})
	dupOut.Outputs = append(dupOut.Outputs, dupOut.Outputs[0])
	tests = append(tests, struct {
		name string
		req  *inference.ModelInferRequest
		code codes.Code
		msg  string
	}{"duplicate output", dupOut, codes.InvalidArgument, "Duplicate output 'fp64_out'"})
	tests[22].msg = "Input 'fp32' has no data"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.Infer(context.Background(), tt.req)
			wantCode(t, err, tt.code, tt.msg)
		})
	}
}

// TestCoreErrors maps core's error kinds to codes.
func TestCoreErrors(t *testing.T) {
	tests := []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{&core.InferenceError{Err: errors.New("kernel failed")}, codes.Internal, "Inference failed: kernel failed"},
		{&core.TimeoutError{After: time.Second}, codes.DeadlineExceeded, (&core.TimeoutError{After: time.Second}).Error()},
		{core.ErrCanceled, codes.Unavailable, "Request canceled before inference finished"},
		{errors.New("surprise"), codes.Internal, "Inference failed: surprise"},
	}
	for _, tt := range tests {
		f := start(t, &echoRunner{err: tt.err}, Options{}, ServerOptions{})
		_, err := f.client.Infer(context.Background(), &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}})
		wantCode(t, err, tt.code, tt.msg)
	}
}

// recorder is a core.RunObserver that keeps the outcomes.
type recorder struct {
	core.NopObserver
	mu       sync.Mutex
	outcomes []core.Outcome
}

func (r *recorder) RequestDone(o core.Outcome, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes = append(r.outcomes, o)
}

// TestObserverCountsCalls: every ModelInfer reaches the run observer (the
// metrics) with its outcome.
func TestObserverCountsCalls(t *testing.T) {
	f := start(t, &echoRunner{}, Options{}, ServerOptions{})
	rec := &recorder{}
	f.model.SetObserver(rec)
	ctx := context.Background()
	if _, err := f.client.Infer(ctx, &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}}); err != nil {
		t.Fatal(err)
	}
	_, _ = f.client.Infer(ctx, &inference.ModelInferRequest{ModelName: "echo"})
	_, _ = f.client.Infer(ctx, &inference.ModelInferRequest{ModelName: "other"})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []core.Outcome{core.OutcomeSuccess, core.OutcomeBadRequest, core.OutcomeBadRequest}
	if !reflect.DeepEqual(rec.outcomes, want) {
		t.Fatalf("outcomes = %v, want %v", rec.outcomes, want)
	}
	if f.model.InFlight() != 0 {
		t.Fatalf("in flight = %d after the calls", f.model.InFlight())
	}
}

func TestHealthFollowsReadiness(t *testing.T) {
	ctx := context.Background()
	// A model that never loads: not serving, inference Unavailable.
	loading := start(t, nil, Options{}, ServerOptions{})
	for _, svc := range []string{"", ServiceName} {
		st, err := loading.client.Health(ctx, svc)
		if err != nil || st != grpc_health_v1.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("loading: health(%q) = %v, %v", svc, st, err)
		}
	}
	if ready, err := loading.client.ServerReady(ctx); err != nil || ready {
		t.Fatalf("loading: ServerReady = %v, %v", ready, err)
	}
	if ready, err := loading.client.ModelReady(ctx, "echo", ""); err != nil || ready {
		t.Fatalf("loading: ModelReady = %v, %v", ready, err)
	}
	_, err := loading.client.Infer(ctx, &inference.ModelInferRequest{ModelName: "echo"})
	wantCode(t, err, codes.Unavailable, "Model 'echo' is loading; try again shortly")
	_, err = loading.client.ModelMetadata(ctx, "echo", "")
	wantCode(t, err, codes.Unavailable, "Model 'echo' is loading")

	f := start(t, &echoRunner{}, Options{}, ServerOptions{})
	for _, svc := range []string{"", ServiceName} {
		st, err := f.client.Health(ctx, svc)
		if err != nil || st != grpc_health_v1.HealthCheckResponse_SERVING {
			t.Fatalf("ready: health(%q) = %v, %v", svc, st, err)
		}
	}
	_, err = f.client.Health(ctx, "other.Service")
	wantCode(t, err, codes.NotFound, "Unknown service 'other.Service'")
	list, err := grpc_health_v1.NewHealthClient(f.client.Conn()).List(ctx, &grpc_health_v1.HealthListRequest{})
	if err != nil || len(list.GetStatuses()) != 2 || list.GetStatuses()[ServiceName].GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("List = %v, %v", list, err)
	}
	watch, err := grpc_health_v1.NewHealthClient(f.client.Conn()).Watch(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("watch first = %v, %v", m, err)
	}
	// Draining: not serving, and inference still answers.
	f.model.Drain()
	if m, err := watch.Recv(); err != nil || m.GetStatus() != grpc_health_v1.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("watch after drain = %v, %v", m, err)
	}
	if st, err := f.client.Health(ctx, ""); err != nil || st != grpc_health_v1.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("draining: health = %v, %v", st, err)
	}
	if _, err := f.client.Infer(ctx, &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}}); err != nil {
		t.Fatalf("draining: a call on its way is still served: %v", err)
	}
	// Stop ends the watch (it would otherwise hold the graceful stop).
	if err := f.server.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err == nil {
		t.Fatal("watch still open after Stop")
	}
}

func TestAPIKeys(t *testing.T) {
	keys := access.NewKeys([]string{"s3cret"})
	f := start(t, &echoRunner{}, Options{}, ServerOptions{Keys: keys})
	ctx := context.Background()
	req := &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}}
	_, err := f.client.Infer(ctx, req)
	wantCode(t, err, codes.Unauthenticated, access.MsgMissing)
	// Open: health, liveness, readiness, metadata.
	if st, err := f.client.Health(ctx, ""); err != nil || st != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("health without a key = %v, %v", st, err)
	}
	if _, err := f.client.ModelMetadata(ctx, "echo", ""); err != nil {
		t.Fatalf("metadata without a key: %v", err)
	}
	if ready, err := f.client.ModelReady(ctx, "echo", ""); err != nil || !ready {
		t.Fatalf("ModelReady without a key = %v, %v", ready, err)
	}
	for _, tt := range []struct {
		key string
		msg string
	}{{"wrong", access.MsgInvalid}} {
		c, err := NewClient(f.server.Addr().String(), WithAPIKey(tt.key))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Infer(ctx, req)
		wantCode(t, err, codes.Unauthenticated, tt.msg)
		_ = c.Close()
	}
	good, err := NewClient(f.server.Addr().String(), WithAPIKey("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if _, err := good.Infer(ctx, req); err != nil {
		t.Fatalf("with the key: %v", err)
	}
}

func TestIsOpen(t *testing.T) {
	for m, want := range map[string]bool{
		"/grpc.health.v1.Health/Check":                                   true,
		"/grpc.health.v1.Health/Watch":                                   true,
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
		"/inference.GRPCInferenceService/ServerLive":                     true,
		"/inference.GRPCInferenceService/ModelMetadata":                  true,
		"/inference.GRPCInferenceService/ModelInfer":                     false,
		"/inference.GRPCInferenceService/ServerLiveX":                    false,
		"/grpc.health.v1.HealthX/Check":                                  false,
		"/inference.GRPCInferenceService/RepositoryIndex":                false,
	} {
		if got := IsOpen(m); got != want {
			t.Errorf("IsOpen(%q) = %v, want %v", m, got, want)
		}
	}
}

// TestStopFinishesInFlight: a call running when Stop begins ends well.
func TestStopFinishesInFlight(t *testing.T) {
	r := &echoRunner{entered: make(chan struct{}), block: make(chan struct{})}
	f := start(t, r, Options{}, ServerOptions{Grace: time.Minute})
	done := make(chan error, 1)
	go func() {
		_, err := f.client.Infer(context.Background(), &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}})
		done <- err
	}()
	<-r.entered
	stopped := make(chan error, 1)
	go func() { stopped <- f.server.Stop(context.Background()) }()
	close(r.block)
	if err := <-done; err != nil {
		t.Fatalf("in-flight call: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// TestStopCancelsPastGrace: past the grace period the call is canceled and
// Stop says so.
func TestStopCancelsPastGrace(t *testing.T) {
	r := &echoRunner{entered: make(chan struct{}), block: make(chan struct{})}
	defer close(r.block)
	f := start(t, r, Options{}, ServerOptions{Grace: time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := f.client.Infer(context.Background(), &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}})
		done <- err
	}()
	<-r.entered
	if err := f.server.Stop(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want the grace period's deadline", err)
	}
	wantCode(t, <-done, codes.Unavailable, "")
}
