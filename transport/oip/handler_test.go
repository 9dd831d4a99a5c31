package oip

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// allDTypes are the element types the protocol carries, in datatype order.
var allDTypes = []tensor.DType{
	tensor.Bool, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64,
	tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64,
	tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64, tensor.String,
}

// echoRunner has one input per datatype, named after it in lower case
// ("fp32", "bytes", ...), of shape [-1, 2] ("fp32" required, the others
// optional), plus "image" FP32 [1, 3]; output "<input>_out" echoes each (an
// empty [0, 2] tensor when the input was not sent), then "scores", a
// sequence that the protocol cannot carry. err makes Predict fail.
type echoRunner struct {
	err   error
	calls int
	last  []*tensor.Tensor
}

func dtName(d tensor.DType) string { return strings.ToLower(Datatype(d)) }

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

func (f *echoRunner) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	f.calls++
	f.last = in
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
	t := &tensor.Tensor{DType: d, Shape: []int64{0, 2}}
	switch d {
	case tensor.Float32:
		t.Data = []float32{}
	case tensor.Float64:
		t.Data = []float64{}
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		t.Data = []uint16{}
	case tensor.Int8:
		t.Data = []int8{}
	case tensor.Int16:
		t.Data = []int16{}
	case tensor.Int32:
		t.Data = []int32{}
	case tensor.Int64:
		t.Data = []int64{}
	case tensor.Uint8:
		t.Data = []uint8{}
	case tensor.Uint32:
		t.Data = []uint32{}
	case tensor.Uint64:
		t.Data = []uint64{}
	case tensor.Bool:
		t.Data = []bool{}
	case tensor.String:
		t.Data = []string{}
	}
	return t
}

// sample is a [2, 2] tensor of d with recognisable values, and the JSON of
// its data.
func sample(d tensor.DType) (*tensor.Tensor, string) {
	t := &tensor.Tensor{DType: d, Shape: []int64{2, 2}}
	js := "[1,2,3,4]"
	switch d {
	case tensor.Bool:
		t.Data, js = []bool{true, false, false, true}, "[true,false,false,true]"
	case tensor.Uint8:
		t.Data, js = []uint8{0, 1, 254, 255}, "[0,1,254,255]"
	case tensor.Uint16:
		t.Data, js = []uint16{0, 1, 65534, 65535}, "[0,1,65534,65535]"
	case tensor.Uint32:
		t.Data, js = []uint32{0, 1, 7, 4294967295}, "[0,1,7,4294967295]"
	case tensor.Uint64:
		t.Data, js = []uint64{0, 1, 7, 18446744073709551615}, "[0,1,7,18446744073709551615]"
	case tensor.Int8:
		t.Data, js = []int8{-128, -1, 0, 127}, "[-128,-1,0,127]"
	case tensor.Int16:
		t.Data, js = []int16{-32768, -1, 0, 32767}, "[-32768,-1,0,32767]"
	case tensor.Int32:
		t.Data, js = []int32{-2147483648, -1, 0, 2147483647}, "[-2147483648,-1,0,2147483647]"
	case tensor.Int64:
		t.Data, js = []int64{-9007199254740993, -1, 0, 9223372036854775807}, "[-9007199254740993,-1,0,9223372036854775807]"
	case tensor.Float16:
		t.Data, js = []uint16{0x3c00, 0xc100, 0x3800, 0x7bff}, "[1,-2.5,0.5,65504]"
	case tensor.BFloat16:
		t.Data, js = []uint16{0x3f80, 0xc020, 0x3f00, 0x4120}, "[1,-2.5,0.5,10]"
	case tensor.Float32:
		t.Data, js = []float32{1.5, -2, 0.1, 3e38}, "[1.5,-2,0.1,3e+38]"
	case tensor.Float64:
		t.Data, js = []float64{1.5, -2, 0.1, 1e300}, "[1.5,-2,0.1,1e+300]"
	case tensor.String:
		t.Data, js = []string{"a", "", "grüße", "\"q\""}, `["a","","grüße","\"q\""]`
	}
	return t, js
}

// newTestHandler returns a handler over a model that loads r (or stays
// loading when r is nil).
func newTestHandler(t testing.TB, r core.Runner, o Options) (*Handler, *core.Model) {
	t.Helper()
	m := core.NewModel("echo")
	o.Model = m
	if o.Version == "" {
		o.Version = "1.2.3"
	}
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{h.Prepare}, nil, nil)
		select {
		case <-m.Done():
		case <-time.After(time.Minute): // a hang, not a slow machine
			t.Fatal("model did not load")
		}
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return h, m
}

func call(h http.Handler, method, path, contentType, body string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// errorMessage returns the {"error"} message, failing on another body.
func errorMessage(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || len(m) != 1 || m["error"] == "" {
		t.Fatalf("body is not {\"error\"}: %s", rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	return m["error"]
}

const fp32Input = `{"name":"fp32","shape":[1,2],"datatype":"FP32","data":[1,2]}`

func TestWhileLoading(t *testing.T) {
	h, _ := newTestHandler(t, nil, Options{})
	if rec := call(h, "GET", "/v2", "", ""); rec.Code != 200 || rec.Body.String() != `{"name":"svc","version":"1.2.3","extensions":["binary_tensor_data","sequence","model_repository"]}` {
		t.Errorf("server metadata while loading: %d %s", rec.Code, rec.Body)
	}
	if rec := call(h, "GET", "/v2/health/live", "", ""); rec.Code != 200 || rec.Body.String() != `{"live":true}` {
		t.Errorf("live while loading: %d %s", rec.Code, rec.Body)
	}
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/v2/health/ready", ""},
		{"GET", "/v2/models/echo", ""},
		{"GET", "/v2/models/echo/ready", ""},
		{"GET", "/v2/models/echo/versions/7/ready", ""},
		{"POST", "/v2/models/echo/infer", `{"inputs":[` + fp32Input + `]}`},
	} {
		rec := call(h, tt.method, tt.path, "application/json", tt.body)
		if rec.Code != 503 || errorMessage(t, rec) != "Model 'echo' is loading; try again shortly" {
			t.Errorf("%s %s while loading: %d %s", tt.method, tt.path, rec.Code, rec.Body)
		}
	}
	if rec := call(h, "GET", "/v2/models/other", "", ""); rec.Code != 404 || errorMessage(t, rec) != "Unknown model 'other'; this server serves 'echo'" {
		t.Errorf("wrong name while loading: %d %s", rec.Code, rec.Body)
	}
}

func TestEndpoints(t *testing.T) {
	h, m := newTestHandler(t, &echoRunner{}, Options{})
	var meta strings.Builder
	meta.WriteString(`{"name":"echo","versions":["7"],"platform":"onnx_onnxv1","inputs":[`)
	for _, d := range allDTypes {
		meta.WriteString(`{"name":"` + dtName(d) + `","datatype":"` + Datatype(d) + `","shape":[-1,2]},`)
	}
	meta.WriteString(`{"name":"image","datatype":"FP32","shape":[1,3]}],"outputs":[`)
	for _, d := range allDTypes {
		meta.WriteString(`{"name":"` + dtName(d) + `_out","datatype":"` + Datatype(d) + `","shape":[-1,2]},`)
	}
	meta.WriteString(`{"name":"image_out","datatype":"FP32","shape":[1,3]}]}`)
	tests := []struct {
		name, path string
		status     int
		want       string // body, or the error message
	}{
		{"server metadata", "/v2", 200, `{"name":"svc","version":"1.2.3","extensions":["binary_tensor_data","sequence","model_repository"]}`},
		{"live", "/v2/health/live", 200, `{"live":true}`},
		{"ready", "/v2/health/ready", 200, `{"ready":true}`},
		{"model metadata", "/v2/models/echo", 200, meta.String()},
		{"model metadata of the version", "/v2/models/echo/versions/7", 200, meta.String()},
		{"model ready", "/v2/models/echo/ready", 200, `{"name":"echo","ready":true}`},
		{"model version ready", "/v2/models/echo/versions/7/ready", 200, `{"name":"echo","ready":true}`},
		{"unknown model", "/v2/models/other", 404, "Unknown model 'other'; this server serves 'echo'"},
		{"unknown model ready", "/v2/models/other/ready", 404, "Unknown model 'other'; this server serves 'echo'"},
		{"unknown version", "/v2/models/echo/versions/8", 404, "Unknown version '8' of model 'echo'; it has version '7'"},
		{"unknown version ready", "/v2/models/echo/versions/8/ready", 404, "Unknown version '8' of model 'echo'; it has version '7'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(h, "GET", tt.path, "", "")
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != 200 {
				if msg := errorMessage(t, rec); msg != tt.want {
					t.Errorf("error %q, want %q", msg, tt.want)
				}
				return
			}
			if rec.Body.String() != tt.want || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("body %s\nwant %s", rec.Body, tt.want)
			}
		})
	}
	// Draining: not ready, but inferences still run.
	m.Drain()
	for _, p := range []string{"/v2/health/ready", "/v2/models/echo/ready"} {
		if rec := call(h, "GET", p, "", ""); rec.Code != 503 || errorMessage(t, rec) != "Model 'echo' is draining: the server is shutting down" {
			t.Errorf("%s while draining: %d %s", p, rec.Code, rec.Body)
		}
	}
	if rec := call(h, "POST", "/v2/models/echo/infer", "application/json", `{"inputs":[`+fp32Input+`]}`); rec.Code != 200 {
		t.Errorf("infer while draining: %d %s", rec.Code, rec.Body)
	}
	if rec := call(h, "GET", "/v2/health/live", "", ""); rec.Code != 200 {
		t.Errorf("live while draining: %d", rec.Code)
	}
}

// TestInferJSON runs every datatype through JSON, flat and nested.
func TestInferJSON(t *testing.T) {
	h, _ := newTestHandler(t, &echoRunner{}, Options{})
	for _, d := range allDTypes {
		for _, nested := range []bool{false, true} {
			name := Datatype(d)
			if nested {
				name += " nested"
			}
			t.Run(name, func(t *testing.T) {
				_, js := sample(d)
				data := js
				if nested {
					parts := strings.SplitN(strings.Trim(js, "[]"), ",", 4)
					data = "[[" + parts[0] + "," + parts[1] + "],[" + parts[2] + "," + parts[3] + "]]"
				}
				body := `{"inputs":[` + fp32Input + `,{"name":"` + dtName(d) + `","shape":[2,2],"datatype":"` + Datatype(d) + `","data":` + data + `}],` +
					`"outputs":[{"name":"` + dtName(d) + `_out"}]}`
				if d == tensor.Float32 {
					body = `{"inputs":[{"name":"fp32","shape":[2,2],"datatype":"FP32","data":` + data + `}],"outputs":[{"name":"fp32_out"}]}`
				}
				rec := call(h, "POST", "/v2/models/echo/infer", "application/json", body)
				want := `{"model_name":"echo","model_version":"7","outputs":[{"name":"` + dtName(d) + `_out","datatype":"` + Datatype(d) + `","shape":[2,2],"data":` + js + `}]}`
				if rec.Code != 200 || rec.Body.String() != want {
					t.Fatalf("%d %s\nwant %s", rec.Code, rec.Body, want)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" || rec.Header().Get(HeaderInferenceHeaderLength) != "" {
					t.Errorf("headers %v", rec.Header())
				}
			})
		}
	}
}

// TestInferBinary round-trips every datatype as binary data through the
// client, alone and mixed with JSON inputs and outputs.
func TestInferBinary(t *testing.T) {
	r := &echoRunner{}
	h, _ := newTestHandler(t, r, Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := NewClient(srv.URL, srv.Client())
	ctx := context.Background()
	fp32, _ := sample(tensor.Float32)
	for _, d := range allDTypes {
		t.Run(Datatype(d), func(t *testing.T) {
			in, _ := sample(d)
			req := &InferRequest{ID: "req-" + Datatype(d), Inputs: []InferInput{{Name: dtName(d), Tensor: in, Binary: true}},
				Outputs: []InferOutput{{Name: dtName(d) + "_out", Binary: true}, {Name: "fp32_out"}}}
			if d != tensor.Float32 {
				// Mixed: a JSON input beside the binary one.
				req.Inputs = append([]InferInput{{Name: "fp32", Tensor: fp32}}, req.Inputs...)
			} else {
				req.Outputs = req.Outputs[:1]
			}
			res, err := c.Infer(ctx, "echo", req)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Output(dtName(d) + "_out")
			if got == nil || !got.Binary || !reflect.DeepEqual(got.Data, in.Data) || !reflect.DeepEqual(got.Shape, in.Shape) || got.DType != d {
				t.Fatalf("binary output %+v, want %v", got, in.Data)
			}
			if js := res.Output("fp32_out"); d != tensor.Float32 && (js == nil || js.Binary || !reflect.DeepEqual(js.Data, fp32.Data)) {
				t.Errorf("JSON output %+v", js)
			}
			if res.ID != req.ID || res.ModelName != "echo" || res.ModelVersion != "7" || len(res.Outputs) != len(req.Outputs) {
				t.Errorf("response %+v", res)
			}
			// The decoded input is what was sent.
			if !reflect.DeepEqual(r.last[indexOf(d)].Data, in.Data) {
				t.Errorf("the model got %v", r.last[indexOf(d)])
			}
		})
	}
	// binary_data_output: every output binary unless an output says not.
	in, _ := sample(tensor.Int64)
	res, err := c.Infer(ctx, "echo", &InferRequest{BinaryOutput: true, Inputs: []InferInput{{Name: "fp32", Tensor: fp32}, {Name: "int64", Tensor: in}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != len(allDTypes)+1 {
		t.Fatalf("%d outputs", len(res.Outputs))
	}
	for _, o := range res.Outputs {
		if !o.Binary {
			t.Errorf("output %s not binary", o.Name)
		}
	}
	if o := res.Output("int64_out"); !reflect.DeepEqual(o.Data, in.Data) {
		t.Errorf("int64_out %v", o.Data)
	}
	if !bytes.Equal(res.Parameters, []byte(`{"binary_data_output":true}`)) {
		t.Errorf("parameters %s", res.Parameters)
	}
}

func indexOf(d tensor.DType) int {
	for i, x := range allDTypes {
		if x == d {
			return i
		}
	}
	return -1
}

// binaryBody builds a binary request: the JSON header and the raw bytes.
func binaryBody(header string, raw ...[]byte) (string, string) {
	return header + string(bytes.Join(raw, nil)), strconv.Itoa(len(header))
}

func le32(v ...float32) []byte {
	var b []byte
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, mathFloat32bits(f))
	}
	return b
}

func TestInferWire(t *testing.T) {
	h, _ := newTestHandler(t, &echoRunner{}, Options{})
	binHeader := `{"inputs":[{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}],"outputs":[{"name":"fp32_out","parameters":{"binary_data":true}}]}`
	body, hl := binaryBody(binHeader, le32(1.5, -2))
	rec := call(h, "POST", "/v2/models/echo/infer", "application/octet-stream", body, HeaderInferenceHeaderLength, hl)
	wantHeader := `{"model_name":"echo","model_version":"7","outputs":[{"name":"fp32_out","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]}`
	if rec.Code != 200 || rec.Body.String() != wantHeader+string(le32(1.5, -2)) {
		t.Fatalf("binary: %d %q", rec.Code, rec.Body)
	}
	if rec.Header().Get("Content-Type") != "application/octet-stream" || rec.Header().Get(HeaderInferenceHeaderLength) != strconv.Itoa(len(wantHeader)) ||
		rec.Header().Get("Content-Length") != strconv.Itoa(len(wantHeader)+8) {
		t.Errorf("headers %v", rec.Header())
	}

	tests := []struct {
		name, body string
		want       string
	}{
		{"id and parameters echoed", `{"id":"a\"b","parameters":{"x":[1,{"y":null}],"binary_data_output":false},"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out"}]}`,
			`{"model_name":"echo","model_version":"7","id":"a\"b","parameters":{"x":[1,{"y":null}],"binary_data_output":false},"outputs":[{"name":"fp32_out","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`},
		{"outputs in the order asked", `{"inputs":[` + fp32Input + `,{"name":"int8","shape":[1,2],"datatype":"INT8","data":[[3,4]]}],"outputs":[{"name":"int8_out"},{"name":"fp32_out"}]}`,
			`{"model_name":"echo","model_version":"7","outputs":[{"name":"int8_out","datatype":"INT8","shape":[1,2],"data":[3,4]},{"name":"fp32_out","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`},
		{"fields in any order, unknown ones ignored", `{"model_name":"echo","inputs":[{"data":[1,2],"extra":{},"datatype":"FP32","shape":[1,2],"name":"fp32"}],"outputs":[{"parameters":{"other":1},"name":"fp32_out"}]}`,
			`{"model_name":"echo","model_version":"7","outputs":[{"name":"fp32_out","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`},
		{"fixed shape", `{"inputs":[` + fp32Input + `,{"name":"image","shape":[1,3],"datatype":"FP32","data":[1,2,3]}],"outputs":[{"name":"image_out"}]}`,
			`{"model_name":"echo","model_version":"7","outputs":[{"name":"image_out","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]}`},
		{"empty batch", `{"inputs":[{"name":"fp32","shape":[0,2],"datatype":"FP32","data":[]}],"outputs":[{"name":"fp32_out"}]}`,
			`{"model_name":"echo","model_version":"7","outputs":[{"name":"fp32_out","datatype":"FP32","shape":[0,2],"data":[]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(h, "POST", "/v2/models/echo/versions/7/infer", "application/json", tt.body)
			if rec.Code != 200 || rec.Body.String() != tt.want {
				t.Fatalf("%d %s\nwant %s", rec.Code, rec.Body, tt.want)
			}
		})
	}
	// All tensor outputs by default, the sequence left out.
	rec = call(h, "POST", "/v2/models/echo/infer", "", `{"inputs":[`+fp32Input+`]}`)
	var res struct {
		Outputs []struct{ Name string } `json:"outputs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 || len(res.Outputs) != len(allDTypes)+1 || res.Outputs[len(allDTypes)].Name != "image_out" {
		t.Errorf("default outputs: %d %s", rec.Code, rec.Body)
	}
}

func TestBadRequests(t *testing.T) {
	h, _ := newTestHandler(t, &echoRunner{}, Options{Limits: transport.Limits{MaxBodyBytes: 1024}})
	in := func(fields string) string { return `{"inputs":[` + fields + `]}` }
	bin8 := string(le32(1, 2))
	tests := []struct {
		name, path, ct, body, headerLen string
		status                          int
		want                            string
	}{
		{"unknown model", "/v2/models/nope/infer", "application/json", in(fp32Input), "", 404, "Unknown model 'nope'; this server serves 'echo'"},
		{"unknown version", "/v2/models/echo/versions/1/infer", "application/json", in(fp32Input), "", 404, "Unknown version '1' of model 'echo'; it has version '7'"},
		{"content type", "", "text/plain", in(fp32Input), "", 415, "Unsupported Content-Type 'text/plain': send application/json, or application/octet-stream with the Inference-Header-Content-Length header"},
		{"too large", "", "application/json", in(fp32Input) + strings.Repeat(" ", 1024), "", 413, "Request body too large: the limit is 1 KiB"},
		{"malformed", "", "application/json", `{"inputs":[`, "", 400, "Invalid JSON body: unexpected end of input at offset 11"},
		{"not an object", "", "application/json", `[1]`, "", 400, "The inference request must be a JSON object with an \"inputs\" array"},
		{"inputs not an array", "", "application/json", `{"inputs":{}}`, "", 400, "Invalid \"inputs\": expected an array"},
		{"input not an object", "", "application/json", `{"inputs":[1]}`, "", 400, "Invalid inputs[0]: expected an object"},
		{"id not a string", "", "application/json", `{"id":1,"inputs":[]}`, "", 400, "Invalid \"id\": expected a string"},
		{"parameters not an object", "", "application/json", `{"parameters":[],"inputs":[]}`, "", 400, "Invalid \"parameters\": expected an object"},
		{"missing input", "", "application/json", in(""), "", 400, "Missing required input: 'fp32'"},
		{"no inputs at all", "", "application/json", `{}`, "", 400, "Missing required input: 'fp32'"},
		{"unknown input", "", "application/json", in(`{"name":"x","shape":[1],"datatype":"FP32","data":[1]}`), "", 400, "Unknown input 'x'; the model's inputs are: 'bool', 'uint8', 'uint16', 'uint32', 'uint64', 'int8', 'int16', 'int32', 'int64', 'fp16', 'bf16', 'fp32', 'fp64', 'bytes', 'image'"},
		{"duplicate input", "", "application/json", in(fp32Input + "," + fp32Input), "", 400, "Duplicate input 'fp32'"},
		{"name not UTF-8", "", "application/json", in("{\"name\":\"fp\xff32\",\"shape\":[1,2],\"datatype\":\"FP32\",\"data\":[1,2]}"), "", 400, "Invalid \"name\" of inputs[0]: invalid UTF-8 in string"},
		{"BYTES not UTF-8", "", "application/json", in(fp32Input + ",{\"name\":\"bytes\",\"shape\":[1,2],\"datatype\":\"BYTES\",\"data\":[\"a\",\"\xffb\"]}"), "", 400, "Invalid value for 'bytes' at [1]: invalid UTF-8 in string"},
		{"no name", "", "application/json", in(`{"shape":[1,2],"datatype":"FP32","data":[1,2]}`), "", 400, "Invalid inputs[0]: \"name\" is missing"},
		{"no datatype", "", "application/json", in(`{"name":"fp32","shape":[1,2],"data":[1,2]}`), "", 400, "Input 'fp32': \"datatype\" is missing (the model takes FP32)"},
		{"unknown datatype", "", "application/json", in(`{"name":"fp32","shape":[1,2],"datatype":"FLOAT","data":[1,2]}`), "", 400, "Invalid datatype 'FLOAT' for input 'fp32': expected one of " + datatypeList},
		{"wrong datatype", "", "application/json", in(`{"name":"fp32","shape":[1,2],"datatype":"INT64","data":[1,2]}`), "", 400, "Invalid datatype for input 'fp32': the model takes FP32, got INT64"},
		{"no shape", "", "application/json", in(`{"name":"fp32","datatype":"FP32","data":[1,2]}`), "", 400, "Input 'fp32': \"shape\" is missing"},
		{"bad shape", "", "application/json", in(`{"name":"fp32","shape":[1,-2],"datatype":"FP32","data":[1,2]}`), "", 400, "Invalid \"shape\" of input 'fp32': expected an array of non-negative integers"},
		{"shape not an array", "", "application/json", in(`{"name":"fp32","shape":2,"datatype":"FP32","data":[1,2]}`), "", 400, "Invalid \"shape\" of input 'fp32': expected an array of non-negative integers"},
		{"wrong rank", "", "application/json", in(`{"name":"fp32","shape":[2],"datatype":"FP32","data":[1,2]}`), "", 400, "Invalid shape for 'fp32': expected rank 2 [-1, 2], got rank 1 [2]"},
		{"wrong fixed dimension", "", "application/json", in(`{"name":"fp32","shape":[2,1],"datatype":"FP32","data":[1,2]}`), "", 400, "Invalid shape for 'fp32': expected [-1, 2], got [2, 1]"},
		{"too few elements", "", "application/json", in(`{"name":"fp32","shape":[2,2],"datatype":"FP32","data":[1,2,3]}`), "", 400, "Invalid input for 'fp32': shape [2, 2] needs 4 elements, got 3"},
		{"other nesting", "", "application/json", in(`{"name":"fp32","shape":[2,2],"datatype":"FP32","data":[[1],[2],[3],[4]]}`), "", 400, "Invalid input for 'fp32': data nested as [4, 1] does not match shape [2, 2]"},
		{"bad element", "", "application/json", in(fp32Input + `,{"name":"int8","shape":[1,2],"datatype":"INT8","data":[1,200]}`), "", 400, "Invalid value for 'int8' at [1]: 200 is out of range for int8"},
		{"bad element out of order", "", "application/json", in(fp32Input + `,{"data":[true,"x"],"name":"bool","shape":[1,2],"datatype":"BOOL"}`), "", 400, "Invalid value for 'bool' at [1]: expected a boolean, got a string"},
		{"no data", "", "application/json", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32"}`), "", 400, "Input 'fp32' has no \"data\" (or parameters.binary_data_size with binary data after the JSON)"},
		{"unknown output", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"z"}]}`, "", 400, "Unknown output 'z'; the model's outputs are: 'bool_out', 'uint8_out', 'uint16_out', 'uint32_out', 'uint64_out', 'int8_out', 'int16_out', 'int32_out', 'int64_out', 'fp16_out', 'bf16_out', 'fp32_out', 'fp64_out', 'bytes_out', 'image_out', 'scores'"},
		{"duplicate output", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out"},{"name":"fp32_out"}]}`, "", 400, "Duplicate output 'fp32_out'"},
		{"sequence output", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"scores"}]}`, "", 400, "Output 'scores' is a sequence, not a tensor; the Open Inference Protocol carries tensors only"},
		{"output without a name", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{}]}`, "", 400, "Invalid outputs[0]: \"name\" is missing"},
		{"binary_data not a bool", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out","parameters":{"binary_data":1}}]}`, "", 400, "Invalid parameters.binary_data of outputs[0]: expected true or false"},
		{"classification", "", "application/json", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out","parameters":{"classification":2}}]}`, "", 400, "Output parameters.classification: the classification extension is not supported"},
		{"shared memory", "", "application/json", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"shared_memory_region":"r"}}`), "", 400, "Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the body"},
		{"binary size without the header", "", "application/json", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}`), "", 400, "Input 'fp32' has parameters.binary_data_size, but the request has no Inference-Header-Content-Length header to say where its JSON ends"},
		{"data and binary", "", "application/octet-stream", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","data":[1,2],"parameters":{"binary_data_size":8}}`) + bin8, "auto", 400, "Input 'fp32' has both \"data\" and parameters.binary_data_size: send one"},
		{"header length not a number", "", "application/octet-stream", in(fp32Input), "x", 400, "Invalid Inference-Header-Content-Length 'x': expected a non-negative integer"},
		{"header length past the body", "", "application/octet-stream", in(fp32Input), "1000", 400, "Inference-Header-Content-Length is 1000, past the end of the 73-byte body"},
		{"header length too short", "", "application/octet-stream", in(fp32Input), "20", 400, "Invalid JSON body: unexpected end of input at offset 20"},
		{"binary sizes do not add up", "", "application/octet-stream", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}`) + bin8 + "xx", "auto", 400, "The body has 10 bytes of binary data after the 96-byte JSON header, but the inputs' binary_data_size are 8"},
		{"binary data but no binary input", "", "application/octet-stream", in(fp32Input) + bin8, "auto", 400, "The body has 8 bytes of binary data after the 73-byte JSON header, but no input has parameters.binary_data_size"},
		{"binary size past the end", "", "application/octet-stream", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":99}}`) + bin8, "auto", 400, "The body has 8 bytes of binary data after the 97-byte JSON header, but the inputs' binary_data_size are 99"},
		{"binary size against the shape", "", "application/octet-stream", in(`{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":4}}`) + bin8[:4], "auto", 400, "Invalid binary data for 'fp32': shape [1, 2] of FP32 takes 8 bytes, binary_data_size is 4"},
		{"binary bool", "", "application/octet-stream", in(fp32Input+`,{"name":"bool","shape":[1,2],"datatype":"BOOL","parameters":{"binary_data_size":2}}`) + "\x01\x02", "auto", 400, "Invalid binary data for 'bool': BOOL element 1 is byte 2, expected 0 or 1"},
		{"binary bytes length past the end", "", "application/octet-stream", in(fp32Input+`,{"name":"bytes","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":9}}`) + "\x01\x00\x00\x00a\x09\x00\x00\x00", "auto", 400, "Invalid binary data for 'bytes': BYTES element 1 is 9 bytes long, past the end of its binary data"},
		{"binary bytes left over", "", "application/octet-stream", in(fp32Input+`,{"name":"bytes","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":11}}`) + "\x01\x00\x00\x00a\x01\x00\x00\x00bc", "auto", 400, "Invalid binary data for 'bytes': its 2 elements take 10 bytes, binary_data_size is 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/v2/models/echo/infer"
			}
			var headers []string
			if tt.headerLen == "auto" {
				// The JSON ends at the last '}'.
				headers = []string{HeaderInferenceHeaderLength, strconv.Itoa(strings.LastIndexByte(tt.body, '}') + 1)}
			} else if tt.headerLen != "" {
				headers = []string{HeaderInferenceHeaderLength, tt.headerLen}
			}
			rec := call(h, "POST", path, tt.ct, tt.body, headers...)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if msg := errorMessage(t, rec); msg != tt.want {
				t.Errorf("error %q\nwant  %q", msg, tt.want)
			}
		})
	}
}

func TestRunnerErrors(t *testing.T) {
	tests := []struct {
		err    error
		status int
		msg    string
	}{
		{&core.InferenceError{Err: errors.New("bad node")}, 500, "Inference failed: bad node"},
		{&core.TimeoutError{After: 2 * time.Second}, 504, "Inference timed out after 2s"},
		{core.ErrCanceled, 503, "Request canceled before inference finished"},
		{errors.New("surprise"), 500, "Inference failed: surprise"},
	}
	for _, tt := range tests {
		h, _ := newTestHandler(t, &echoRunner{err: tt.err}, Options{})
		rec := call(h, "POST", "/v2/models/echo/infer", "application/json", `{"inputs":[`+fp32Input+`]}`)
		if rec.Code != tt.status || errorMessage(t, rec) != tt.msg {
			t.Errorf("%v: %d %s, want %d %q", tt.err, rec.Code, rec.Body, tt.status, tt.msg)
		}
	}
}

func TestClient(t *testing.T) {
	h, m := newTestHandler(t, nil, Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := NewClient(srv.URL+"/", srv.Client())
	ctx := context.Background()
	if err := c.Live(ctx); err != nil {
		t.Fatal(err)
	}
	var se *StatusError
	if err := c.Ready(ctx); !errors.As(err, &se) || se.Status != 503 || se.Message != "Model 'echo' is loading; try again shortly" {
		t.Fatalf("ready while loading: %v", err)
	}
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: &echoRunner{}}, nil }, []core.Preparer{h.Prepare}, nil, nil)
	<-m.Done()
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ModelReady(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if sm, err := c.ServerMetadata(ctx); err != nil || sm.Name != "svc" || sm.Extensions[0] != "binary_tensor_data" {
		t.Fatalf("server metadata %+v %v", sm, err)
	}
	if mm, err := c.ModelMetadata(ctx, "echo"); err != nil || mm.Platform != Platform || mm.Versions[0] != "7" || mm.Inputs[0].Datatype != "BOOL" {
		t.Fatalf("model metadata %+v %v", mm, err)
	}
	if _, err := c.ModelMetadata(ctx, "nope"); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("unknown model: %v", err)
	}
	if _, err := c.Infer(ctx, "echo", &InferRequest{}); !errors.As(err, &se) || se.Status != 400 || se.Message != "Missing required input: 'fp32'" {
		t.Fatalf("bad infer: %v", err)
	}
}

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }
