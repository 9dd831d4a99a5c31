package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/genmodels/slowload"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport/oip"
)

// oipClient returns a v2 client of s.
func (s *server) oipClient() *oip.Client { return oip.NewClient(s.URL, client) }

// predictFloat32 runs /predict with one float32 input and returns each
// output flattened.
func predictFloat32(t *testing.T, s *server, input string, x *tensor.Tensor) map[string][]float32 {
	t.Helper()
	body := `{"` + input + `":` + string(tensorjson.AppendJSON(nil, x)) + `}`
	r := s.predict(body)
	if r.Status != 200 {
		t.Fatalf("/predict: %d %s", r.Status, r.Body)
	}
	var raw map[string]any
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for k, v := range raw {
		var flat []float32
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case []any:
				for _, e := range x {
					walk(e)
				}
			case float64:
				flat = append(flat, float32(x))
			}
		}
		walk(v)
		out[k] = flat
	}
	return out
}

func oipError(t *testing.T, r response) string {
	t.Helper()
	m := r.JSON(t)
	msg, ok := m["error"].(string)
	if !ok || len(m) != 1 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("error body is not {\"error\": string}: %s", r.Body)
	}
	return msg
}

func TestOIPClassifier(t *testing.T) {
	t.Parallel()
	sequential(t)
	s := startServer(t, model("classifier.onnx"))
	c := s.oipClient()
	ctx := context.Background()

	if !strings.Contains(s.stdout.String(), "POST  "+s.URL+"/v2/models/classifier/infer") {
		t.Errorf("banner lacks the v2 inference endpoint:\n%s", s.stdout.String())
	}
	if err := c.Live(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ModelReady(ctx, "classifier"); err != nil {
		t.Fatal(err)
	}
	sm, err := c.ServerMetadata(ctx)
	if err != nil || !reflect.DeepEqual(sm, oip.ServerMetadata{Name: "svc", Version: "test", Extensions: []string{"binary_tensor_data", "sequence", "model_repository"}}) {
		t.Fatalf("server metadata %+v %v", sm, err)
	}
	r := s.get("/v2/models/classifier")
	want := `{"name":"classifier","versions":["3"],"platform":"onnx_onnxv1","inputs":[{"name":"input","datatype":"FP32","shape":[-1,4]}],"outputs":[{"name":"probabilities","datatype":"FP32","shape":[-1,3]},{"name":"label","datatype":"INT64","shape":[-1]}]}`
	if r.Status != 200 || string(r.Body) != want {
		t.Fatalf("model metadata %d %s", r.Status, r.Body)
	}
	if r := s.get("/v2/models/classifier/versions/3"); r.Status != 200 || string(r.Body) != want {
		t.Errorf("model metadata of version 3: %d %s", r.Status, r.Body)
	}
	for _, p := range []string{"/v2/models/resnet", "/v2/models/resnet/ready", "/v2/models/classifier/versions/4"} {
		if r := s.get(p); r.Status != 404 || !strings.HasPrefix(oipError(t, r), "Unknown ") {
			t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
		}
	}
	if r := s.do("POST", "/v2/models/resnet/infer", "application/json", strings.NewReader(`{"inputs":[]}`)); r.Status != 404 ||
		oipError(t, r) != "Unknown model 'resnet'; this server serves 'classifier'" {
		t.Errorf("infer on a wrong name: %d %s", r.Status, r.Body)
	}

	// The same numbers as /predict, through JSON (flat and nested) and
	// binary data.
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{3, 4}, Data: []float32{5.1, 3.5, 1.4, 0.2, 5.9, 3.0, 4.2, 1.5, 6.7, 3.0, 5.2, 2.3}}
	ref := predictFloat32(t, s, "input", x)
	for _, binary := range []bool{false, true} {
		res, err := c.Infer(ctx, "classifier", &oip.InferRequest{ID: "iris", Inputs: []oip.InferInput{{Name: "input", Tensor: x, Binary: binary}}, BinaryOutput: binary})
		if err != nil {
			t.Fatal(err)
		}
		p, l := res.Output("probabilities"), res.Output("label")
		if p == nil || l == nil || p.Binary != binary || !reflect.DeepEqual(p.Data, ref["probabilities"]) || !reflect.DeepEqual(p.Shape, []int64{3, 3}) {
			t.Errorf("binary=%v: probabilities %+v, /predict %v", binary, p, ref["probabilities"])
		}
		if !reflect.DeepEqual(l.Data, []int64{0, 1, 2}) || res.ID != "iris" || res.ModelVersion != "3" {
			t.Errorf("binary=%v: label %v, response %+v", binary, l.Data, res)
		}
	}
	nested := `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[[5.1,3.5,1.4,0.2]]}],"outputs":[{"name":"label"}],"parameters":{"trace":"abc"}}`
	r = s.do("POST", "/v2/models/classifier/versions/3/infer", "application/json", strings.NewReader(nested))
	if r.Status != 200 || string(r.Body) != `{"model_name":"classifier","model_version":"3","parameters":{"trace":"abc"},"outputs":[{"name":"label","datatype":"INT64","shape":[1],"data":[0]}]}` {
		t.Errorf("nested: %d %s", r.Status, r.Body)
	}

	// The example of /openapi.json runs.
	var doc struct {
		Paths map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Example json.RawMessage `json:"example"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.get("/openapi.json").Body, &doc); err != nil {
		t.Fatal(err)
	}
	ex := doc.Paths["/v2/models/{model_name}/infer"].Post.RequestBody.Content["application/json"].Example
	if r := s.do("POST", "/v2/models/classifier/infer", "application/json", bytes.NewReader(ex)); len(ex) == 0 || r.Status != 200 {
		t.Errorf("the OpenAPI example %s: %d %s", ex, r.Status, r.Body)
	}

	// Bad requests: {"error"} and the status, and the server goes on.
	bad := []struct {
		name, ct, body, headerLen string
		status                    int
		want                      string
	}{
		{"wrong shape", "application/json", `{"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}`, "", 400, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"wrong datatype", "application/json", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP64","data":[1,2,3,4]}]}`, "", 400, "Invalid datatype for input 'input': the model takes FP32, got FP64"},
		{"count", "application/json", `{"inputs":[{"name":"input","shape":[2,4],"datatype":"FP32","data":[1,2,3,4]}]}`, "", 400, "Invalid input for 'input': shape [2, 4] needs 8 elements, got 4"},
		{"malformed", "application/json", `{"inputs":[{`, "", 400, "Invalid JSON body: unexpected end of input at offset 12"},
		{"header past the body", "application/octet-stream", `{"inputs":[]}`, "99", 400, "Inference-Header-Content-Length is 99, past the end of the 13-byte body"},
		{"binary size", "application/octet-stream", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":16}}]}` + "12345678", "auto", 400,
			"The body has 8 bytes of binary data after the 98-byte JSON header, but the inputs' binary_data_size are 16"},
		{"content type", "text/plain", `{}`, "", 415, "Unsupported Content-Type 'text/plain': send application/json, or application/octet-stream with the Inference-Header-Content-Length header"},
	}
	for _, tt := range bad {
		var headers []string
		if tt.headerLen == "auto" {
			headers = []string{oip.HeaderInferenceHeaderLength, strconv.Itoa(strings.LastIndexByte(tt.body, '}') + 1)}
		} else if tt.headerLen != "" {
			headers = []string{oip.HeaderInferenceHeaderLength, tt.headerLen}
		}
		r := s.do("POST", "/v2/models/classifier/infer", tt.ct, strings.NewReader(tt.body), headers...)
		if r.Status != tt.status || oipError(t, r) != tt.want {
			t.Errorf("%s: %d %s, want %d %q", tt.name, r.Status, r.Body, tt.status, tt.want)
		}
	}
	big := `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}],"pad":"` + strings.Repeat("x", 17<<20) + `"}`
	if r := s.do("POST", "/v2/models/classifier/infer", "application/json", strings.NewReader(big)); r.Status != 413 || oipError(t, r) != "Request body too large: the limit is 16 MiB" {
		t.Errorf("too large: %d %.200s", r.Status, r.Body)
	}
	if r := s.predict(`{"input": [5.1, 3.5, 1.4, 0.2]}`); r.Status != 200 {
		t.Errorf("/predict after the bad v2 requests: %d %s", r.Status, r.Body)
	}
}

// TestOIPDatatypes runs every datatype the generated models have through
// JSON and binary data, with binary and JSON tensors mixed in one request.
func TestOIPDatatypes(t *testing.T) {
	t.Parallel()
	sequential(t)
	ctx := context.Background()
	t.Run("alltypes", func(t *testing.T) {
		s := startServer(t, model("alltypes.onnx"))
		c := s.oipClient()
		inputs := []*tensor.Tensor{
			{DType: tensor.Float64, Shape: []int64{4}, Data: []float64{1, math.E, 0, -1}},
			{DType: tensor.Int8, Shape: []int64{2}, Data: []int8{-128, 127}},
			{DType: tensor.Int16, Shape: []int64{2}, Data: []int16{-32768, 32767}},
			{DType: tensor.Int32, Shape: []int64{2}, Data: []int32{-2147483648, 2147483647}},
			{DType: tensor.Uint8, Shape: []int64{2}, Data: []uint8{0, 255}},
			{DType: tensor.Uint16, Shape: []int64{2}, Data: []uint16{0, 65535}},
			{DType: tensor.Uint32, Shape: []int64{2}, Data: []uint32{0, 4294967295}},
			{DType: tensor.Uint64, Shape: []int64{3}, Data: []uint64{0, 1, 18446744073709551615}},
		}
		names := []string{"f64", "i8", "i16", "i32", "u8", "u16", "u32", "u64"}
		for _, mode := range []string{"json", "binary", "mixed"} {
			req := &oip.InferRequest{}
			for i, x := range inputs {
				bin := mode == "binary" || (mode == "mixed" && i%2 == 1)
				req.Inputs = append(req.Inputs, oip.InferInput{Name: names[i], Tensor: x, Binary: bin})
				req.Outputs = append(req.Outputs, oip.InferOutput{Name: names[i] + "_out", Binary: bin})
			}
			if mode != "json" {
				req.Outputs = append(req.Outputs, oip.InferOutput{Name: "f64_log", Binary: true})
			}
			res, err := c.Infer(ctx, "alltypes", req)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			for i, x := range inputs {
				o := res.Output(names[i] + "_out")
				if o == nil || o.DType != x.DType || !reflect.DeepEqual(o.Data, x.Data) || !reflect.DeepEqual(o.Shape, x.Shape) {
					t.Errorf("%s: %s_out = %+v, want %v", mode, names[i], o, x.Data)
				}
			}
			if mode == "json" {
				// JSON has no spelling for NaN and infinities: null.
				body, _, err := oip.EncodeInfer(&oip.InferRequest{Inputs: req.Inputs, Outputs: []oip.InferOutput{{Name: "f64_log"}}})
				if err != nil {
					t.Fatal(err)
				}
				r := s.do("POST", "/v2/models/alltypes/infer", "application/json", bytes.NewReader(body))
				if r.Status != 200 || string(r.Body) != `{"model_name":"alltypes","model_version":"1","outputs":[{"name":"f64_log","datatype":"FP64","shape":[4],"data":[0,1,null,null]}]}` {
					t.Errorf("f64_log as JSON: %d %s", r.Status, r.Body)
				}
				continue
			}
			if lg := res.Output("f64_log").Data.([]float64); lg[0] != 0 || lg[1] != 1 || !math.IsInf(lg[2], -1) || !math.IsNaN(lg[3]) {
				t.Errorf("%s: f64_log = %v", mode, lg)
			}
		}
	})
	t.Run("multi_input", func(t *testing.T) {
		s := startServer(t, model("multi_input.onnx"))
		c := s.oipClient()
		req := &oip.InferRequest{
			Inputs: []oip.InferInput{
				{Name: "features", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 3}, Data: []float32{1, 2, 3, -1, 0.5, 0}}, Binary: true},
				{Name: "ids", Tensor: &tensor.Tensor{DType: tensor.Int64, Shape: []int64{2, 2}, Data: []int64{1, 2, 10, -20}}},
				{Name: "mask", Tensor: &tensor.Tensor{DType: tensor.Bool, Shape: []int64{2, 2}, Data: []bool{true, false, false, false}}, Binary: true},
				{Name: "text", Tensor: &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{"hello world", "Grüße, straße!"}}},
			},
			Outputs: []oip.InferOutput{{Name: "text_upper", Binary: true}, {Name: "mask_not"}, {Name: "id_sum", Binary: true}, {Name: "weighted"}},
		}
		res, err := c.Infer(ctx, "multi_input", req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"text_upper": []string{"HELLO WORLD", "GRÜßE, STRAßE!"},
			"mask_not":   []bool{false, true, true, true},
			"id_sum":     []int64{3, -10},
			"weighted":   []float32{2, 4, 6, -2, 1, 0},
		}
		var order []string
		for _, o := range res.Outputs {
			order = append(order, o.Name)
			if !reflect.DeepEqual(o.Data, want[o.Name]) {
				t.Errorf("%s = %v, want %v", o.Name, o.Data, want[o.Name])
			}
		}
		if strings.Join(order, ",") != "text_upper,mask_not,id_sum,weighted" {
			t.Errorf("outputs in the order %v", order)
		}
		// BYTES as binary input, strings as JSON.
		r := s.do("POST", "/v2/models/multi_input/infer", "application/json", strings.NewReader(
			`{"inputs":[{"name":"features","shape":[1,3],"datatype":"FP32","data":[1,2,3]},{"name":"ids","shape":[1,2],"datatype":"INT64","data":[1,2]},`+
				`{"name":"mask","shape":[1,2],"datatype":"BOOL","data":[true,true]},{"name":"text","shape":[1],"datatype":"BYTES","data":["abc"]}],"outputs":[{"name":"text_upper"}]}`))
		if r.Status != 200 || string(r.Body) != `{"model_name":"multi_input","model_version":"1","outputs":[{"name":"text_upper","datatype":"BYTES","shape":[1],"data":["ABC"]}]}` {
			t.Errorf("JSON strings: %d %s", r.Status, r.Body)
		}
	})
	t.Run("float16", func(t *testing.T) {
		s := startServer(t, model("float16.onnx"))
		c := s.oipClient()
		x := &tensor.Tensor{DType: tensor.Float16, Shape: []int64{1, 4}, Data: []uint16{0x3c00, 0xc100, 0x3800, 0x7bff}}
		res, err := c.Infer(ctx, "float16", &oip.InferRequest{Inputs: []oip.InferInput{{Name: "x", Tensor: x, Binary: true}}, BinaryOutput: true})
		if err != nil {
			t.Fatal(err)
		}
		if y := res.Output("y"); y.DType != tensor.Float16 || !reflect.DeepEqual(y.Data, []uint16{0x4000, 0xc500, 0x3c00, 0x7c00}) {
			t.Errorf("y = %+v", y)
		}
		if y32 := res.Output("y32").Data.([]float32); y32[0] != 2 || y32[1] != -5 || y32[2] != 1 || !math.IsInf(float64(y32[3]), 1) {
			t.Errorf("y32 = %v", y32)
		}
		r := s.do("POST", "/v2/models/float16/infer", "application/json", strings.NewReader(
			`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP16","data":[[1,-2.5,0.5,3]]}],"outputs":[{"name":"y"}]}`))
		if r.Status != 200 || string(r.Body) != `{"model_name":"float16","model_version":"1","outputs":[{"name":"y","datatype":"FP16","shape":[1,4],"data":[2,-5,1,6]}]}` {
			t.Errorf("FP16 as JSON: %d %s", r.Status, r.Body)
		}
	})
	t.Run("scalar", func(t *testing.T) {
		s := startServer(t, model("scalar.onnx"))
		c := s.oipClient()
		x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{}, Data: []float32{3}}
		scale := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1}, Data: []float32{2}}
		bias := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1}, Data: []float32{-1}}
		for _, tt := range []struct {
			inputs []oip.InferInput
			want   float32
		}{
			{[]oip.InferInput{{Name: "x", Tensor: x}, {Name: "scale", Tensor: scale, Binary: true}}, 6.5},
			{[]oip.InferInput{{Name: "x", Tensor: x, Binary: true}, {Name: "scale", Tensor: scale}, {Name: "bias", Tensor: bias}}, 5},
		} {
			res, err := c.Infer(ctx, "scalar", &oip.InferRequest{Inputs: tt.inputs})
			if err != nil {
				t.Fatal(err)
			}
			if y := res.Output("y"); !reflect.DeepEqual(y.Data, []float32{tt.want}) || !reflect.DeepEqual(y.Shape, []int64{1}) {
				t.Errorf("y = %+v, want [%v]", y, tt.want)
			}
		}
		r := s.do("POST", "/v2/models/scalar/infer", "application/json", strings.NewReader(
			`{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[3]},{"name":"scale","shape":[1],"datatype":"FP32","data":[2]}]}`))
		if r.Status != 400 || oipError(t, r) != "Invalid shape for 'x': expected rank 0 [], got rank 1 [1]" {
			t.Errorf("rank-1 x: %d %s", r.Status, r.Body)
		}
	})
}

// TestOIPPaddleOCR compares the v2 binary path with /predict on a
// third-party model.
func TestOIPPaddleOCR(t *testing.T) {
	t.Parallel()
	sequential(t)
	s := startServer(t, thirdParty(t, "paddleocr-cls"))
	c := s.oipClient()
	ctx := context.Background()
	const h, w = 48, 192
	data := make([]float32, 2*3*h*w)
	for i := range data {
		b, rest := i/(3*h*w), i%(3*h*w)
		y, x := (rest%(h*w))/w, rest%w
		data[i] = float32(textLine(0, y, x))
		if b == 1 { // upside down
			data[i] = float32(textLine(0, h-1-y, x))
		}
	}
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 3, h, w}, Data: data}
	ref := predictFloat32(t, s, "x", x)
	res, err := c.Infer(ctx, "paddleocr-cls", &oip.InferRequest{Inputs: []oip.InferInput{{Name: "x", Tensor: x, Binary: true}}, BinaryOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Output("softmax_0.tmp_0")
	if o == nil || !o.Binary || !reflect.DeepEqual(o.Shape, []int64{2, 2}) || !reflect.DeepEqual(o.Data, ref["softmax_0.tmp_0"]) {
		t.Fatalf("v2 %+v, /predict %v", o, ref)
	}
	mm, err := c.ModelMetadata(ctx, "paddleocr-cls")
	if err != nil || !reflect.DeepEqual(mm.Inputs, []oip.TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 3, -1, -1}}}) {
		t.Errorf("metadata %+v %v", mm, err)
	}
	var se *oip.StatusError
	if _, err := c.Infer(ctx, "model", &oip.InferRequest{Inputs: []oip.InferInput{{Name: "x", Tensor: x}}}); !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Errorf("wrong name: %v", err)
	}
}

// TestOIPReadinessWhileLoading: liveness answers at once, readiness and
// the model endpoints 503 {"error"} until the model is loaded, then 200.
func TestOIPReadinessWhileLoading(t *testing.T) {
	t.Parallel()
	skipShort(t, "its model takes seconds of CPU to load")
	dir := filepath.Join(t.TempDir(), "slowload")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := slowload.Write(filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	s := startLoading(t, dir)
	if r := s.get("/v2/health/live"); r.Status != 200 || string(r.Body) != `{"live":true}` {
		t.Fatalf("live while loading: %d %s", r.Status, r.Body)
	}
	ready := s.get("/v2/health/ready")
	if strings.Contains(s.stdout.String(), "URL") {
		t.Fatal("the model loaded before the first readiness probe; too fast to test this")
	}
	if ready.Status != 503 || oipError(t, ready) != "Model 'slowload' is loading; try again shortly" {
		t.Fatalf("ready while loading: %d %s", ready.Status, ready.Body)
	}
	for _, p := range []string{"/v2/models/slowload/ready", "/v2/models/slowload"} {
		if r := s.get(p); r.Status != 503 {
			t.Errorf("GET %s while loading: %d %s", p, r.Status, r.Body)
		}
	}
	body := `{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`
	if r := s.do("POST", "/v2/models/slowload/infer", "application/json", strings.NewReader(body)); r.Status != 503 || oipError(t, r) != "Model 'slowload' is loading; try again shortly" {
		t.Errorf("infer while loading: %d %s", r.Status, r.Body)
	}
	s.waitBanner()
	if r := s.get("/v2/health/ready"); r.Status != 200 || string(r.Body) != `{"ready":true}` {
		t.Errorf("ready once loaded: %d %s", r.Status, r.Body)
	}
	if r := s.get("/v2/models/slowload/ready"); r.Status != 200 || string(r.Body) != `{"name":"slowload","ready":true}` {
		t.Errorf("model ready once loaded: %d %s", r.Status, r.Body)
	}
	if r := s.do("POST", "/v2/models/slowload/infer", "application/json", strings.NewReader(body)); r.Status != 200 ||
		string(r.Body) != `{"model_name":"slowload","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1,4],"data":[2,3,4,5]}]}` {
		t.Errorf("infer once loaded: %d %s", r.Status, r.Body)
	}
}
