package grpcapi

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// The wire forms of an inference request: the REST codec's JSON and binary
// data, this codec's typed contents and raw_input_contents.
const (
	restJSON = 1 << iota
	restBinary
	grpcTyped
	grpcRaw
	rest     = restJSON | restBinary
	grpcForm = grpcTyped | grpcRaw
	anyForm  = rest | grpcForm
)

var formNames = map[int]string{restJSON: "rest-json", restBinary: "rest-binary", grpcTyped: "grpc-typed", grpcRaw: "grpc-raw"}

// wireInput is one input of a request, sent in each wire form with zeros
// for data (none when the shape takes more than a few elements).
type wireInput struct {
	name, datatype              string
	shape                       []int64
	noName, noDatatype, noShape bool
	sharedMemory                bool
}

// wireOutput is one output a request asks for; param is a parameter it
// sets.
type wireOutput struct {
	name   string
	noName bool
	param  string
}

// wireRequest is an inference request to send in each wire form.
type wireRequest struct {
	model, version string
	inputs         []wireInput
	outputs        []wireOutput // nil: none named
	// badBinaryOutput sends binary_data_output as a number (REST) or a
	// string_param (gRPC).
	badBinaryOutput bool
	// params are the request's parameters, each an int64 (REST: a JSON
	// number; gRPC: an int64_param) or a uint64 (a uint64_param).
	params map[string]any
}

var wireFP32 = wireInput{name: "fp32", datatype: "FP32", shape: []int64{1, 2}}

// input is wireFP32 changed by edit.
func input(edit func(in *wireInput)) wireInput {
	in := wireFP32
	edit(&in)
	return in
}

// zeros is the input's data: zeros of its datatype (FP32 for an unknown
// one), none when the shape takes more than 16 elements or is invalid.
func (in wireInput) zeros() *tensor.Tensor {
	dt, ok := oip.ParseDatatype(in.datatype)
	if !ok {
		dt = tensor.Float32
	}
	n, err := tensorjson.ElementCount(in.name, in.shape)
	if err != nil || n > 16 {
		n = 0
	}
	t := &tensor.Tensor{DType: dt, Shape: []int64{n}}
	switch dt {
	case tensor.Float64:
		t.Data = make([]float64, n)
	case tensor.Int64:
		t.Data = make([]int64, n)
	default:
		t.DType, t.Data = tensor.Float32, make([]float32, n)
	}
	return t
}

// restBody encodes r for the REST codec: the body and the length of its
// JSON part (-1: all JSON).
func (r wireRequest) restBody(binary bool) ([]byte, int) {
	ins := []any{}
	var data []byte
	for _, in := range r.inputs {
		m := map[string]any{}
		if !in.noName {
			m["name"] = in.name
		}
		if !in.noDatatype {
			m["datatype"] = in.datatype
		}
		if !in.noShape {
			m["shape"] = in.shape
		}
		params := map[string]any{}
		if in.sharedMemory {
			params[oip.ParamSharedMemory] = "region"
		}
		if binary {
			n := len(data)
			data = oip.AppendBinary(data, in.zeros())
			params["binary_data_size"] = len(data) - n
		} else {
			m["data"] = json.RawMessage(tensorjson.AppendJSON(nil, in.zeros()))
		}
		if len(params) > 0 {
			m["parameters"] = params
		}
		ins = append(ins, m)
	}
	body := map[string]any{"inputs": ins}
	if r.outputs != nil {
		outs := []any{}
		for _, o := range r.outputs {
			m := map[string]any{}
			if !o.noName {
				m["name"] = o.name
			}
			if o.param != "" {
				m["parameters"] = map[string]any{o.param: 1}
			}
			outs = append(outs, m)
		}
		body["outputs"] = outs
	}
	if r.badBinaryOutput {
		body["parameters"] = map[string]any{oip.ParamBinaryDataOutput: 1}
	}
	if r.params != nil {
		body["parameters"] = r.params
	}
	header, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	if !binary {
		return header, -1
	}
	return append(header, data...), len(header)
}

// grpcRequest encodes r for this codec.
func (r wireRequest) grpcRequest(raw bool) *inference.ModelInferRequest {
	req := &inference.ModelInferRequest{ModelName: r.model, ModelVersion: r.version}
	strParam := &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: "x"}}
	for _, in := range r.inputs {
		t := in.zeros()
		w := &inference.ModelInferRequest_InferInputTensor{Shape: in.shape}
		if !in.noName {
			w.Name = in.name
		}
		if !in.noDatatype {
			w.Datatype = in.datatype
		}
		if in.sharedMemory {
			w.Parameters = map[string]*inference.InferParameter{oip.ParamSharedMemory: strParam}
		}
		if raw {
			req.RawInputContents = append(req.RawInputContents, tensor.AppendRaw(nil, t))
		} else {
			w.Contents = &inference.InferTensorContents{}
			switch d := t.Data.(type) {
			case []float32:
				w.Contents.Fp32Contents = d
			case []float64:
				w.Contents.Fp64Contents = d
			case []int64:
				w.Contents.Int64Contents = d
			}
		}
		req.Inputs = append(req.Inputs, w)
	}
	for _, o := range r.outputs {
		w := &inference.ModelInferRequest_InferRequestedOutputTensor{}
		if !o.noName {
			w.Name = o.name
		}
		if o.param != "" {
			w.Parameters = map[string]*inference.InferParameter{o.param: {ParameterChoice: &inference.InferParameter_Int64Param{Int64Param: 1}}}
		}
		req.Outputs = append(req.Outputs, w)
	}
	if r.badBinaryOutput {
		req.Parameters = map[string]*inference.InferParameter{oip.ParamBinaryDataOutput: strParam}
	}
	for k, v := range r.params {
		if req.Parameters == nil {
			req.Parameters = map[string]*inference.InferParameter{}
		}
		switch v := v.(type) {
		case int64:
			req.Parameters[k] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_Int64Param{Int64Param: v}}
		case uint64:
			req.Parameters[k] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_Uint64Param{Uint64Param: v}}
		}
	}
	return req
}

// seqRunner is echoRunner with one more input, "seq", a sequence the
// protocol cannot carry.
type seqRunner struct{ *echoRunner }

func (r seqRunner) Specs() []tensor.Spec {
	return append(r.echoRunner.Specs(), tensor.Spec{Name: "seq", DType: tensor.Invalid})
}

func (r seqRunner) Info() core.ModelInfo {
	info := r.echoRunner.Info()
	info.Inputs = append(info.Inputs, core.InputSpec{Name: "seq", Type: "seq(float32)", Kind: core.KindSequence})
	return info
}

// TestCodecsRefuseAlike sends each request the protocol's model refuses in
// every wire form that can carry it, and checks that the codecs answer
// with the same message (where a message names a field, each names it as
// its wire form does) and the status and code of the refusal's kind.
func TestCodecsRefuseAlike(t *testing.T) {
	r := seqRunner{&echoRunner{}}
	f := start(t, r, Options{}, ServerOptions{})
	// The REST handler serves the same runner from a model of its own,
	// whose generation carries its view.
	hm := core.NewModel("echo")
	h, err := oip.NewHandler(oip.Options{Model: hm})
	if err != nil {
		t.Fatal(err)
	}
	hm.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{h.Prepare}, nil, nil)
	<-hm.Done()
	if err := hm.Err(); err != nil {
		t.Fatal(err)
	}
	withFP32 := func(ins ...wireInput) wireRequest {
		return wireRequest{model: "echo", inputs: append([]wireInput{wireFP32}, ins...)}
	}
	// What the table changes is served in every form.
	served := withFP32(input(func(in *wireInput) { in.name, in.datatype = "fp64", "FP64" }))
	served.outputs = []wireOutput{{name: "fp64_out"}}
	for _, binary := range []bool{false, true} {
		if code, body := restCall(h, served, binary); code != http.StatusOK {
			t.Fatalf("REST (binary %v): %d %s", binary, code, body)
		}
	}
	for _, raw := range []bool{false, true} {
		if _, err := f.client.Infer(context.Background(), served.grpcRequest(raw)); err != nil {
			t.Fatalf("gRPC (raw %v): %v", raw, err)
		}
	}
	withParams := func(k string, v any) wireRequest {
		req := withFP32()
		req.params = map[string]any{k: v}
		return req
	}
	withOutputs := func(outs ...wireOutput) wireRequest {
		req := withFP32()
		req.outputs = outs
		return req
	}
	tests := []struct {
		name  string
		req   wireRequest
		forms int
		kind  oip.Kind
		// msg is every codec's message; rest and grpc, when set, are
		// those of one codec.
		msg, rest, grpc string
	}{
		{name: "unknown model", req: wireRequest{model: "other", inputs: []wireInput{wireFP32}}, forms: anyForm, kind: oip.KindNotFound,
			msg: "Unknown model 'other'; this server serves 'echo'"},
		{name: "unknown version", req: wireRequest{model: "echo", version: "8", inputs: []wireInput{wireFP32}}, forms: anyForm, kind: oip.KindNotFound,
			msg: "Unknown version '8' of model 'echo'; it has version '7'"},
		{name: "missing required input", req: wireRequest{model: "echo"}, forms: anyForm, kind: oip.KindInvalid,
			msg: "Missing required input: 'fp32'"},
		{name: "input without a name", req: withFP32(input(func(in *wireInput) { in.noName = true })), forms: anyForm, kind: oip.KindInvalid,
			rest: `Invalid inputs[1]: "name" is missing`, grpc: "Invalid inputs[1]: name is missing"},
		{name: "unknown input", req: withFP32(input(func(in *wireInput) { in.name = "nope" })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Unknown input 'nope'; the model's inputs are: 'bool', 'uint8', 'uint16', 'uint32', 'uint64', 'int8', 'int16', 'int32', 'int64', 'fp16', 'bf16', 'fp32', 'fp64', 'bytes', 'image', 'seq'"},
		{name: "input not a tensor", req: withFP32(input(func(in *wireInput) { in.name = "seq" })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Input 'seq' is not a tensor; the Open Inference Protocol carries tensors only"},
		{name: "duplicate input", req: withFP32(wireFP32), forms: anyForm, kind: oip.KindInvalid,
			msg: "Duplicate input 'fp32'"},
		{name: "input shared memory", req: withFP32(input(func(in *wireInput) { in.name, in.datatype, in.sharedMemory = "fp64", "FP64", true })), forms: anyForm, kind: oip.KindInvalid,
			rest: "Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the body",
			grpc: "Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the request"},
		{name: "no datatype", req: withFP32(input(func(in *wireInput) { in.name, in.noDatatype = "fp64", true })), forms: anyForm, kind: oip.KindInvalid,
			rest: `Input 'fp64': "datatype" is missing (the model takes FP64)`, grpc: "Input 'fp64': datatype is missing (the model takes FP64)"},
		{name: "unknown datatype", req: withFP32(input(func(in *wireInput) { in.name, in.datatype = "fp64", "FLOAT" })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid datatype 'FLOAT' for input 'fp64': expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES"},
		{name: "wrong datatype", req: withFP32(input(func(in *wireInput) { in.name = "fp64" })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid datatype for input 'fp64': the model takes FP64, got FP32"},
		{name: "no shape", req: withFP32(input(func(in *wireInput) { in.name, in.datatype, in.noShape = "fp64", "FP64", true })), forms: rest, kind: oip.KindInvalid,
			msg: `Input 'fp64': "shape" is missing`},
		{name: "wrong rank", req: withFP32(input(func(in *wireInput) { in.name, in.datatype, in.shape = "fp64", "FP64", []int64{2} })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid shape for 'fp64': expected rank 2 [-1, 2], got rank 1 [2]"},
		{name: "wrong fixed dimension", req: withFP32(input(func(in *wireInput) { in.name, in.shape = "image", []int64{1, 4} })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid shape for 'image': expected [1, 3], got [1, 4]"},
		{name: "negative dimension", req: withFP32(input(func(in *wireInput) { in.name, in.datatype, in.shape = "fp64", "FP64", []int64{-1, 2} })), forms: grpcForm, kind: oip.KindInvalid,
			msg: "Invalid shape for 'fp64': [-1, 2] has a negative dimension"},
		{name: "too many elements", req: withFP32(input(func(in *wireInput) { in.name, in.datatype, in.shape = "fp64", "FP64", []int64{1 << 62, 2} })), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid shape for 'fp64': [4611686018427387904, 2] has too many elements"},
		{name: "output without a name", req: withOutputs(wireOutput{noName: true}), forms: anyForm, kind: oip.KindInvalid,
			rest: `Invalid outputs[0]: "name" is missing`, grpc: "Invalid outputs[0]: name is missing"},
		{name: "classification", req: withOutputs(wireOutput{name: "fp32_out", param: oip.ParamClassification}), forms: anyForm, kind: oip.KindInvalid,
			msg: "Output parameters.classification: the classification extension is not supported"},
		{name: "output shared memory", req: withOutputs(wireOutput{name: "fp32_out", param: oip.ParamSharedMemory}), forms: anyForm, kind: oip.KindInvalid,
			msg: "Output parameters.shared_memory_region: the shared-memory extension is not supported"},
		{name: "unknown output", req: withOutputs(wireOutput{name: "zz"}), forms: anyForm, kind: oip.KindInvalid,
			msg: "Unknown output 'zz'; the model's outputs are: 'bool_out', 'uint8_out', 'uint16_out', 'uint32_out', 'uint64_out', 'int8_out', 'int16_out', 'int32_out', 'int64_out', 'fp16_out', 'bf16_out', 'fp32_out', 'fp64_out', 'bytes_out', 'image_out', 'scores'"},
		{name: "output not a tensor", req: withOutputs(wireOutput{name: "scores"}), forms: anyForm, kind: oip.KindInvalid,
			msg: "Output 'scores' is a sequence, not a tensor; the Open Inference Protocol carries tensors only"},
		{name: "duplicate output", req: withOutputs(wireOutput{name: "fp32_out"}, wireOutput{name: "fp32_out"}), forms: anyForm, kind: oip.KindInvalid,
			msg: "Duplicate output 'fp32_out'"},
		{name: "binary_data_output not a boolean", req: wireRequest{model: "echo", inputs: []wireInput{wireFP32}, badBinaryOutput: true}, forms: anyForm, kind: oip.KindInvalid,
			rest: "Invalid parameters.binary_data_output: expected true or false", grpc: "Invalid parameters.binary_data_output: expected a bool_param"},
		{name: "timeout out of range", req: withParams(oip.ParamTimeout, int64(math.MaxInt64/1000+1)), forms: anyForm, kind: oip.KindInvalid,
			msg: "Invalid parameters.timeout: expected microseconds from 0 to 9223372036854775, got 9223372036854776"},
		{name: "timeout over int64", req: withParams(oip.ParamTimeout, uint64(1<<63)), forms: grpcForm, kind: oip.KindInvalid,
			msg: "Invalid parameters.timeout: expected a non-negative int64_param or uint64_param of microseconds"},
		{name: "negative timeout", req: withParams(oip.ParamTimeout, int64(-5)), forms: anyForm, kind: oip.KindInvalid,
			rest: `Invalid parameters.timeout: expected a non-negative integer, got -5`,
			grpc: "Invalid parameters.timeout: expected a non-negative int64_param or uint64_param of microseconds"},
		{name: "negative priority", req: withParams(oip.ParamPriority, int64(-1)), forms: anyForm, kind: oip.KindInvalid,
			rest: `Invalid parameters.priority: expected a non-negative integer, got -1`,
			grpc: "Invalid parameters.priority: expected a non-negative int64_param or uint64_param"},
	}
	wantStatus := map[oip.Kind]int{oip.KindInvalid: http.StatusBadRequest, oip.KindNotFound: http.StatusNotFound}
	wantCode := map[oip.Kind]codes.Code{oip.KindInvalid: codes.InvalidArgument, oip.KindNotFound: codes.NotFound}
	for _, tt := range tests {
		for form := restJSON; form <= grpcRaw; form <<= 1 {
			if tt.forms&form == 0 {
				continue
			}
			t.Run(tt.name+"/"+formNames[form], func(t *testing.T) {
				want := tt.msg
				var got string
				if form&rest != 0 {
					if tt.rest != "" {
						want = tt.rest
					}
					var status int
					status, got = restRefusal(t, h, tt.req, form == restBinary)
					if status != wantStatus[tt.kind] {
						t.Errorf("status %d, want %d", status, wantStatus[tt.kind])
					}
				} else {
					if tt.grpc != "" {
						want = tt.grpc
					}
					_, err := f.client.Infer(context.Background(), tt.req.grpcRequest(form == grpcRaw))
					st, _ := status.FromError(err)
					if st.Code() != wantCode[tt.kind] {
						t.Errorf("code %v, want %v", st.Code(), wantCode[tt.kind])
					}
					got = st.Message()
				}
				if got != want {
					t.Errorf("message %q\nwant    %q", got, want)
				}
			})
		}
	}
}

// restCall sends r to the REST codec and returns the status and body of
// its answer.
func restCall(h http.Handler, r wireRequest, binary bool) (int, []byte) {
	body, headerLen := r.restBody(binary)
	req := httptest.NewRequest(http.MethodPost, oip.InferPath(r.model, r.version), bytes.NewReader(body))
	req.Header = oip.RequestHeader(headerLen)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// restRefusal sends r to the REST codec and returns the status and the
// message of its {"error"} answer.
func restRefusal(t *testing.T, h http.Handler, r wireRequest, binary bool) (int, string) {
	t.Helper()
	code, body := restCall(h, r, binary)
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.Error == "" {
		t.Fatalf("%d %s is not an error", code, body)
	}
	return code, answer.Error
}
