package openapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/openapi"
)

// mediaRunner is a core.Runner that describes a model and runs nothing.
type mediaRunner struct {
	info  core.ModelInfo
	specs []tensor.Spec
}

func (r *mediaRunner) Info() core.ModelInfo { return r.info }
func (r *mediaRunner) Specs() []tensor.Spec { return r.specs }
func (r *mediaRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("mediaRunner runs nothing")
}

// newMediaRunner describes a model of float32 tensor inputs and outputs.
func newMediaRunner(inputs []core.InputSpec, outputs []core.OutputSpec) *mediaRunner {
	r := &mediaRunner{info: core.ModelInfo{Name: "ocr", Version: "1", Format: "onnx", Inputs: inputs, Outputs: outputs, Metadata: map[string]string{}}}
	for _, in := range inputs {
		dt, _ := tensor.ParseDType(in.Type)
		r.specs = append(r.specs, tensor.Spec{Name: in.Name, DType: dt, Shape: in.Shape, Required: in.Required})
	}
	return r
}

func tensorIn(name string, required bool, shape ...int64) core.InputSpec {
	return core.InputSpec{Name: name, Type: "float32", Shape: shape, Required: required, Kind: core.KindTensor}
}

func tensorOut(name string, shape ...int64) core.OutputSpec {
	return core.OutputSpec{Name: name, Type: "float32", Shape: shape, Kind: core.KindTensor}
}

// mediaCase is a model with image inputs and decoded outputs.
type mediaCase struct {
	name    string
	runner  *mediaRunner
	decl    config.Model
	images  []string // the image inputs
	picture bool     // takes an image/* body
	decoded map[string]string
}

func mediaCases() []mediaCase {
	cls := config.ModelOutput{Classify: &config.Classify{TopK: 1, Labels: config.Labels{List: []string{"0", "180"}}}}
	ctc := config.ModelOutput{CTC: &config.CTC{Labels: config.Labels{List: []string{"a", "b", "c"}}}}
	image := func(preset string) config.ModelInput {
		return config.ModelInput{Image: &config.ImageInput{Preset: preset}}
	}
	return []mediaCase{{
		name:    "cls",
		runner:  newMediaRunner([]core.InputSpec{tensorIn("x", true, -1, 3, 48, 192)}, []core.OutputSpec{tensorOut("softmax_0.tmp_0", -1, 2)}),
		decl:    config.Model{Inputs: map[string]config.ModelInput{"x": image("paddleocr-cls")}, Outputs: map[string]config.ModelOutput{"softmax_0.tmp_0": cls}},
		images:  []string{"x"},
		picture: true,
		decoded: map[string]string{"softmax_0.tmp_0": codec.KindClassify},
	}, {
		name: "rec_and_mask",
		runner: newMediaRunner([]core.InputSpec{tensorIn("x", true, -1, 3, 48, -1), tensorIn("mask", true, -1, 2)},
			[]core.OutputSpec{tensorOut("softmax_11.tmp_0", -1, -1, 5), tensorOut("raw", -1, 2)}),
		decl:    config.Model{Inputs: map[string]config.ModelInput{"x": image("paddleocr-rec")}, Outputs: map[string]config.ModelOutput{"softmax_11.tmp_0": ctc}},
		images:  []string{"x"},
		decoded: map[string]string{"softmax_11.tmp_0": codec.KindCTC},
	}, {
		name:    "images_only",
		runner:  newMediaRunner([]core.InputSpec{tensorIn("images", true, 1, 3, 640, 640)}, []core.OutputSpec{tensorOut("output0", 1, 84, 8400)}),
		decl:    config.Model{Inputs: map[string]config.ModelInput{"images": image("yolo")}},
		images:  []string{"images"},
		picture: true,
	}, {
		name: "segment",
		runner: newMediaRunner([]core.InputSpec{tensorIn("images", true, 1, 3, 640, 640)},
			[]core.OutputSpec{tensorOut("output0", 1, 116, 8400), tensorOut("output1", 1, 32, 160, 160)}),
		decl:    config.Model{Inputs: map[string]config.ModelInput{"images": image("yolo")}, Outputs: map[string]config.ModelOutput{"output0": {Segment: &config.Detect{}}}},
		images:  []string{"images"},
		picture: true,
		decoded: map[string]string{"output0": codec.KindSegment},
	}}
}

func (c mediaCase) set(t testing.TB) *codec.Set {
	t.Helper()
	set, err := codec.New(c.decl, config.Default().Limits).For(c.runner)
	if err != nil || set == nil {
		t.Fatalf("codec: %v (set %v)", err, set)
	}
	return set
}

func (c mediaCase) doc(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi.BuildWith(c.runner.Info(), c.set(t))
	if err != nil {
		t.Fatalf("BuildWith(%s): %v", c.name, err)
	}
	return doc
}

// TestMediaDocument checks what the document says of image inputs and
// decoded outputs, and that it survives kin-openapi's validation and a
// round trip through its loader.
func TestMediaDocument(t *testing.T) {
	for _, c := range mediaCases() {
		t.Run(c.name, func(t *testing.T) {
			doc := c.doc(t)
			data, err := openapi.MarshalDocument(doc)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := openapi3.NewLoader().LoadFromData(data)
			if err != nil {
				t.Fatalf("LoadFromData: %v", err)
			}
			if err := loaded.Validate(context.Background()); err != nil {
				t.Fatalf("Validate after reload: %v", err)
			}
			op := doc.Paths.Value("/predict").Post
			checkImageInputs(t, c, requestSchema(t, doc))
			checkMediaContent(t, c, op.RequestBody.Value.Content)
			checkDecodedOutputs(t, c, op)
			checkV2(t, c, doc)
			checkInfoExample(t, c, doc)
		})
	}
}

func checkImageInputs(t *testing.T, c mediaCase, req *openapi3.Schema) {
	t.Helper()
	for _, name := range c.images {
		s := req.Properties[name].Value
		if len(s.OneOf) != 2 || !s.OneOf[0].Value.Type.Is("string") || !s.OneOf[1].Value.Type.Is("array") ||
			!s.OneOf[1].Value.Items.Value.Type.Is("string") {
			t.Errorf("input %s: want oneOf string, array of strings; got %+v", name, s)
		}
		if s.OneOf[0].Value.Format != "" || s.OneOf[0].Value.Pattern != "" {
			t.Errorf("input %s: a picture has format %q pattern %q, want neither", name, s.OneOf[0].Value.Format, s.OneOf[0].Value.Pattern)
		}
		if !strings.Contains(s.Description, "data: URL") || !strings.Contains(s.Description, "resize") {
			t.Errorf("input %s: description %q names neither data: URLs nor the preprocessing", name, s.Description)
		}
		if s.Extensions["x-svc-image"] == nil || s.Extensions["x-svc-dtype"] != nil {
			t.Errorf("input %s: extensions %v, want x-svc-image and no x-svc-dtype", name, s.Extensions)
		}
	}
}

func checkMediaContent(t *testing.T, c mediaCase, content openapi3.Content) {
	t.Helper()
	form := content.Get("multipart/form-data")
	if form == nil {
		t.Fatal("no multipart/form-data body")
	}
	fs := form.Schema.Value
	for name, p := range fs.Properties {
		isImage := slices.Contains(c.images, name)
		if got := p.Value.Format == "binary"; got != isImage || !p.Value.Type.Is("string") {
			t.Errorf("multipart field %s: type %v format %q, want a string, binary iff an image input", name, p.Value.Type, p.Value.Format)
		}
		if isImage && !strings.Contains(form.Encoding[name].ContentType, "image/png") {
			t.Errorf("multipart field %s: encoding %+v", name, form.Encoding[name])
		}
	}
	if len(fs.Properties) != len(c.runner.info.Inputs) || len(fs.Required) != len(c.runner.info.Inputs) {
		t.Errorf("multipart schema: properties %v required %v", sortedNames(fs.Properties), fs.Required)
	}
	for _, mt := range []string{"image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp"} {
		got := content.Get(mt)
		if (got != nil) != c.picture {
			t.Errorf("content %s present %v, want %v", mt, got != nil, c.picture)
		}
		if got != nil && got.Schema.Value.Format != "binary" {
			t.Errorf("content %s: format %q", mt, got.Schema.Value.Format)
		}
	}
}

func sortedNames(m openapi3.Schemas) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func checkDecodedOutputs(t *testing.T, c mediaCase, op *openapi3.Operation) {
	t.Helper()
	resp := op.Responses.Value("200").Value.Content.Get("application/json").Schema.Value
	for name, kind := range c.decoded {
		s := resp.Properties[name].Value
		if len(s.AnyOf) != 2 {
			t.Fatalf("output %s: want anyOf decoded, raw; got %+v", name, s)
		}
		decoded := s.AnyOf[0].Value
		item := decoded.Items.Value
		want := []string{"text", "score"}
		switch kind {
		case codec.KindClassify, codec.KindDetect, codec.KindSegment, codec.KindPose:
			if !item.Type.Is("array") {
				t.Fatalf("output %s: a %s item is %v, want an array", name, kind, item.Type)
			}
			item = item.Items.Value
			want = []string{"label", "index", "score"}
			switch kind {
			case codec.KindDetect:
				want = append(want, "box")
			case codec.KindSegment:
				want = append(want, "box", "polygon")
			case codec.KindPose:
				want = append(want, "box", "keypoints")
			}
		}
		if kind == codec.KindSegment && (item.Properties["polygon"] == nil || item.Properties["mask"] == nil) {
			t.Errorf("output %s: a segment detection has no polygon or mask: %v", name, sortedNames(item.Properties))
		}
		if !slices.Equal(item.Required, want) {
			t.Errorf("output %s: item requires %v, want %v", name, item.Required, want)
		}
		if !strings.Contains(s.Description, "raw=true") || !strings.Contains(s.Description, "("+kind+")") || decoded.Description == "" {
			t.Errorf("output %s: descriptions %q / %q", name, s.Description, decoded.Description)
		}
	}
	raw := op.Parameters.GetByInAndName("query", "raw")
	if (raw != nil) != (len(c.decoded) > 0) {
		t.Fatalf("raw parameter present %v, want %v", raw != nil, len(c.decoded) > 0)
	}
	if raw != nil && !raw.Schema.Value.Type.Is("boolean") {
		t.Errorf("raw parameter: %+v", raw.Schema.Value)
	}
}

func checkV2(t *testing.T, c mediaCase, doc *openapi3.T) {
	t.Helper()
	infer := doc.Paths.Value("/v2/models/{model_name}/infer").Post
	ex, _ := infer.RequestBody.Value.Content.Get("application/json").Example.(map[string]any)
	var inputs []any
	if ex != nil {
		inputs, _ = ex["inputs"].([]any)
	}
	for _, name := range c.images {
		found := false
		for _, in := range inputs {
			m := in.(map[string]any)
			if m["name"] == name {
				found = m["datatype"] == "BYTES"
			}
		}
		if !found {
			t.Errorf("v2 example %v: no BYTES input %s", ex, name)
		}
	}
	params := doc.Components.Schemas["V2InferRequest"].Value.Properties["parameters"].Value
	if got := params.Properties["raw"] != nil; got != (len(c.decoded) > 0) {
		t.Errorf("v2 parameters.raw present %v", got)
	}
	meta := doc.Paths.Value("/v2/models/{model_name}").Get.Responses.Value("200").Value.Content.Get("application/json").Example
	data, _ := json.Marshal(meta)
	for _, name := range c.images {
		if !strings.Contains(string(data), `"datatype":"BYTES","name":"`+name+`","shape":[-1]`) {
			t.Errorf("v2 metadata example %s: image input %s is not BYTES [-1]", data, name)
		}
	}
	for name := range c.decoded {
		if !strings.Contains(string(data), `"datatype":"BYTES","name":"`+name+`"`) {
			t.Errorf("v2 metadata example %s: decoded output %s is not BYTES", data, name)
		}
	}
}

func checkInfoExample(t *testing.T, c mediaCase, doc *openapi3.T) {
	t.Helper()
	ex := doc.Paths.Value("/info").Get.Responses.Value("200").Value.Content.Get("application/json").Example
	data, _ := json.Marshal(ex)
	for _, name := range c.images {
		if !strings.Contains(string(data), `"image":{"color":`) || !strings.Contains(string(data), `"name":"`+name+`"`) {
			t.Errorf("/info example %s: no image entry for %s", data, name)
		}
	}
	for name, kind := range c.decoded {
		if !strings.Contains(string(data), `"decode":{"description":`) || !strings.Contains(string(data), `"kind":"`+kind+`"`) {
			t.Errorf("/info example %s: no decode entry for %s", data, name)
		}
	}
}

// TestMediaExample checks that the /predict example of an image input is
// a picture the server takes.
func TestMediaExample(t *testing.T) {
	c := mediaCases()[0]
	ex := example(t, c.doc(t)).(map[string]any)
	s, ok := ex["x"].(string)
	if !ok {
		t.Fatalf("example %v: x is no string", ex)
	}
	pic, err := codec.Picture(s)
	if err != nil {
		t.Fatal(err)
	}
	set := c.set(t)
	if _, err := set.Tensor(context.Background(), set.Image("x"), [][]byte{pic}, true); err != nil {
		t.Fatalf("the example picture is refused: %v", err)
	}
}

// TestMediaValidateBody checks the validator on bodies of an image input.
func TestMediaValidateBody(t *testing.T) {
	picture := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n..."))
	tests := []struct {
		name, body, want string // want: a part of the message, "" for none
	}{
		{"base64", `{"x": "` + picture + `"}`, ""},
		{"data URL", `{"x": "data:image/png;base64,` + picture + `"}`, ""},
		{"batch", `{"x": ["` + picture + `", "` + picture + `"]}`, ""},
		{"number", `{"x": 3}`, "Invalid input type for 'x': expected an image (a base64 string or a data: URL of a JPEG"},
		{"object", `{"x": {"a": 1}}`, "expected an image"},
		{"bool", `{"x": true}`, "expected an image"},
		{"unknown", `{"x": "` + picture + `", "y": "` + picture + `"}`, "Unknown input 'y'; the model's inputs are: 'x'"},
		{"missing", `{}`, "Missing required input: 'x'"},
	}
	v, err := openapi.NewValidator(mediaCases()[0].doc(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateBody(context.Background(), []byte(tt.body))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestSiteTakesCodec checks that the fx-built site derives the document
// with the codec's declarations.
func TestSiteTakesCodec(t *testing.T) {
	c := mediaCases()[0]
	m := core.NewModel("m")
	site := openapi.NewSite(openapi.SiteParams{Codec: codec.New(c.decl, config.Default().Limits), Model: m})
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: c.runner}, nil }, []core.Preparer{site.Prepare}, nil, nil)
	<-m.Done()
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	err := site.ValidateBody(context.Background(), m.Current(), []byte(`{"x": 1}`))
	if err == nil || !strings.Contains(err.Error(), "expected an image") {
		t.Fatalf("got %v, want the image input's message", err)
	}
	for _, r := range site.Routes() {
		if r.Path != "/openapi.json" {
			continue
		}
		rec := httptest.NewRecorder()
		r.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
		if !strings.Contains(rec.Body.String(), `"multipart/form-data"`) {
			t.Fatalf("/openapi.json has no multipart/form-data body:\n%.400s", rec.Body.String())
		}
		return
	}
	t.Fatal("no /openapi.json route")
}

// TestMediaGolden compares the document of each media case with its
// golden file (run with -update to rewrite them).
func TestMediaGolden(t *testing.T) {
	for _, c := range mediaCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := openapi.MarshalDocument(c.doc(t))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", "media", c.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("document differs from %s (run with -update and review the diff):\n%s", path, firstDiff(string(want), string(got)))
			}
		})
	}
}

// BenchmarkValidateImageBody validates a body holding a 4 MB picture.
func BenchmarkValidateImageBody(b *testing.B) {
	v, err := openapi.NewValidator(mediaCases()[0].doc(b))
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"x": "` + strings.Repeat("iVBORw0KGgoAAAAN", 4<<20/16) + `"}`)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := v.ValidateBody(ctx, body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkByteFormat4MB is what kin-openapi's "byte" format would cost
// on the same string, had the picture schema used it: a regular
// expression over the whole string (and data: URLs refused).
func BenchmarkByteFormat4MB(b *testing.B) {
	s := openapi3.NewStringSchema().WithFormat("byte")
	value := strings.Repeat("iVBORw0KGgoAAAAN", 4<<20/16)
	b.SetBytes(int64(len(value)))
	for b.Loop() {
		if err := s.VisitJSON(value); err != nil {
			b.Fatal(err)
		}
	}
	if s.VisitJSON("data:image/png;base64,"+value[:16]) == nil {
		b.Fatal("format byte took a data: URL")
	}
}
