package openapi_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/openapi"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden compares the document derived from each test model with its
// golden file. Run `go test ./openapi -run TestGolden -update` after an
// intended change and review the diff.
func TestGolden(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			got, err := openapi.MarshalDocument(buildDoc(t, name))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".json")
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
				t.Errorf("document for %s differs from %s (run with -update and review the diff):\n%s",
					name, path, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line with some context.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(no line differs)"
}

// TestValidateAndReload checks every derived document with kin-openapi's
// Validate, both as built and after a round trip through its JSON form with
// kin-openapi's loader (what a client of /openapi.json sees).
func TestValidateAndReload(t *testing.T) {
	ctx := context.Background()
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			doc := buildDoc(t, name)
			if err := doc.Validate(ctx); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			data, err := openapi.MarshalDocument(doc)
			if err != nil {
				t.Fatal(err)
			}
			loader := openapi3.NewLoader()
			loaded, err := loader.LoadFromData(data)
			if err != nil {
				t.Fatalf("LoadFromData: %v", err)
			}
			if err := loaded.Validate(ctx); err != nil {
				t.Fatalf("Validate after reload: %v", err)
			}
			// The reloaded document drives a validator the same way.
			if _, err := openapi.NewValidator(loaded); err != nil {
				t.Fatalf("NewValidator(reloaded): %v", err)
			}
		})
	}
}

func TestBuildRejectsBadInfo(t *testing.T) {
	tests := []struct {
		name string
		give core.ModelInfo
	}{
		{"unnamed input", core.ModelInfo{Name: "m", Version: "1", Inputs: []core.InputSpec{{Type: "float32"}}}},
		{"duplicate input", core.ModelInfo{Name: "m", Version: "1", Inputs: []core.InputSpec{
			{Name: "a", Type: "float32"}, {Name: "a", Type: "int64"}}}},
		{"duplicate output", core.ModelInfo{Name: "m", Version: "1", Outputs: []core.OutputSpec{
			{Name: "y", Type: "float32"}, {Name: "y", Type: "float32"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openapi.Build(tt.give)
			if !errors.Is(err, openapi.ErrInvalidModelInfo) {
				t.Fatalf("err = %v, want ErrInvalidModelInfo", err)
			}
		})
	}
}

func TestInfoAndEndpoints(t *testing.T) {
	doc := buildDoc(t, "classifier")
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	if doc.Info.Title != "classifier" || doc.Info.Version != "1" {
		t.Errorf("info = %q %q, want the model's name and version", doc.Info.Title, doc.Info.Version)
	}
	// Every endpoint of the service, with the statuses it documents.
	want := map[string][]string{
		"POST /predict":     {"200", "400", "413", "415", "500", "504"},
		"GET /health":       {"200"},
		"GET /info":         {"200", "500"},
		"GET /metrics":      {"200"},
		"GET /docs":         {"200", "503"},
		"GET /redoc":        {"200", "503"},
		"GET /openapi.json": {"200"},
		// The Open Inference Protocol v2, with its own {"error"} body.
		"GET /v2":                     {"200"},
		"GET /v2/health/live":         {"200"},
		"GET /v2/health/ready":        {"200", "503"},
		"GET /v2/models/{model_name}": {"200", "404", "503"},
		"GET /v2/models/{model_name}/versions/{model_version}":        {"200", "404", "503"},
		"GET /v2/models/{model_name}/ready":                           {"200", "404", "503"},
		"GET /v2/models/{model_name}/versions/{model_version}/ready":  {"200", "404", "503"},
		"POST /v2/models/{model_name}/infer":                          {"200", "400", "404", "413", "415", "500", "503", "504"},
		"POST /v2/models/{model_name}/versions/{model_version}/infer": {"200", "400", "404", "413", "415", "500", "503", "504"},
		"GET /v2/models/{model_name}/stats":                           {"200", "404"},
		"GET /v2/models/{model_name}/versions/{model_version}/stats":  {"200", "404"},
	}
	got := map[string][]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			got[method+" "+path] = op.Responses.Keys()
			for code, ref := range op.Responses.Map() {
				if ref.Value == nil {
					t.Errorf("%s %s %s: unresolved response", method, path, code)
					continue
				}
				if code >= "400" {
					want := "#/components/schemas/Error"
					if strings.HasPrefix(path, "/v2") {
						want = "#/components/schemas/V2Error"
					}
					s := ref.Value.Content.Get("application/json").Schema
					if s.Ref != want {
						t.Errorf("%s %s %s: error schema %q, want %q", method, path, code, s.Ref, want)
					}
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("operations = %v, want %v", keys(got), keys(want))
	}
	for op, codes := range want {
		if !slices.Equal(got[op], codes) {
			t.Errorf("%s responses = %v, want %v", op, got[op], codes)
		}
	}
	errSchema := doc.Components.Schemas["Error"].Value
	if !slices.Equal(errSchema.Required, []string{"detail"}) || !errSchema.Properties["detail"].Value.Type.Is("string") {
		t.Errorf("Error schema is not {detail: string}: %+v", errSchema)
	}
	for _, name := range []string{"Health", "ModelInfo", "InputSpec", "OutputSpec", "Metrics", "ProviderInfo"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("component schema %s missing", name)
		}
	}
	// /info's example is the model description itself.
	ex := doc.Paths.Value("/info").Get.Responses.Value("200").Value.Content.Get("application/json").Example
	if m, ok := ex.(map[string]any); !ok || m["name"] != "classifier" {
		t.Errorf("/info example = %v", ex)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestUnnamedModelStillValid(t *testing.T) {
	doc, err := openapi.Build(core.ModelInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Info.Title == "" || doc.Info.Version == "" {
		t.Errorf("empty title or version: %+v", doc.Info)
	}
}

// schemaShape summarizes a schema as nested arrays: e.g.
// "array<array[4]<number/float>>".
func schemaShape(s *openapi3.Schema) string {
	if s == nil {
		return "nil"
	}
	if len(s.AnyOf) > 0 {
		var parts []string
		for _, alt := range s.AnyOf {
			parts = append(parts, schemaShape(alt.Value))
		}
		return "anyOf(" + strings.Join(parts, " | ") + ")"
	}
	if s.Type == nil {
		return "any"
	}
	t := (*s.Type)[0]
	switch t {
	case "array":
		bounds := ""
		switch {
		case s.MaxItems != nil && *s.MaxItems == s.MinItems:
			bounds = "[" + strconv.Itoa(int(s.MinItems)) + "]"
		case s.MinItems > 0:
			bounds = "[" + strconv.Itoa(int(s.MinItems)) + "..]"
		}
		return "array" + bounds + "<" + schemaShape(s.Items.Value) + ">"
	case "object":
		if s.AdditionalProperties.Schema != nil {
			return "object<" + schemaShape(s.AdditionalProperties.Schema.Value) + ">"
		}
		return "object"
	}
	out := t
	if s.Format != "" {
		out += "/" + s.Format
	}
	if s.Min != nil {
		out += " min=" + trimFloat(*s.Min)
	}
	if s.Max != nil {
		out += " max=" + trimFloat(*s.Max)
	}
	return out
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestInputSchemas pins the derivation rules for every input of the test
// models, independently of the golden files.
func TestInputSchemas(t *testing.T) {
	tests := []struct {
		model, input, want string
	}{
		{"classifier", "input", "anyOf(array<array[4]<number/float>> | array[4]<number/float>)"},
		{"multi_input", "features", "anyOf(array<array[3]<number/float>> | array[3]<number/float>)"},
		{"multi_input", "ids", "anyOf(array<array[2]<integer/int64>> | array[2]<integer/int64>)"},
		{"multi_input", "mask", "anyOf(array<array[2]<boolean>> | array[2]<boolean>)"},
		{"multi_input", "text", "anyOf(array<string> | string)"},
		{"scalar", "x", "number/float"},
		{"scalar", "scale", "anyOf(array[1]<number/float> | number/float)"},
		{"scalar", "bias", "anyOf(array[1]<number/float> | number/float)"},
		{"float16", "x", "anyOf(array<array[4]<number/float min=-65504 max=65504>> | array[4]<number/float min=-65504 max=65504>)"},
		{"fixed_shape", "image", "anyOf(array[1]<array[3]<array[4]<array[4]<number/float>>>> | array[3]<array[4]<array[4]<number/float>>>)"},
		{"alltypes", "f64", "anyOf(array<number/double> | number/double)"},
		{"alltypes", "i8", "anyOf(array<integer/int32 min=-128 max=127> | integer/int32 min=-128 max=127)"},
		{"alltypes", "i16", "anyOf(array<integer/int32 min=-32768 max=32767> | integer/int32 min=-32768 max=32767)"},
		{"alltypes", "i32", "anyOf(array<integer/int32 min=-2147483648 max=2147483647> | integer/int32 min=-2147483648 max=2147483647)"},
		{"alltypes", "u8", "anyOf(array<integer/int32 min=0 max=255> | integer/int32 min=0 max=255)"},
		{"alltypes", "u16", "anyOf(array<integer/int32 min=0 max=65535> | integer/int32 min=0 max=65535)"},
		{"alltypes", "u32", "anyOf(array<integer/int64 min=0 max=4294967295> | integer/int64 min=0 max=4294967295)"},
		{"alltypes", "u64", "anyOf(array<integer min=0> | integer min=0)"},
		{"ppocr_cls", "x", "anyOf(array<array[3]<array<array<number/float>>>> | array[3]<array<array<number/float>>>)"},
		{"detector", "images", "anyOf(array[1]<array[3]<array[640]<array[640]<number/float>>>> | array[3]<array[640]<array[640]<number/float>>>)"},
	}
	docs := map[string]*openapi3.T{}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.input, func(t *testing.T) {
			doc := docs[tt.model]
			if doc == nil {
				doc = buildDoc(t, tt.model)
				docs[tt.model] = doc
			}
			prop := requestSchema(t, doc).Properties[tt.input]
			if prop == nil {
				t.Fatalf("no property %q", tt.input)
			}
			if got := schemaShape(prop.Value); got != tt.want {
				t.Errorf("schema\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestRequestObject(t *testing.T) {
	tests := []struct {
		model    string
		props    []string
		required []string
	}{
		{"classifier", []string{"input"}, []string{"input"}},
		{"multi_input", []string{"features", "ids", "mask", "text"}, []string{"features", "ids", "mask", "text"}},
		{"scalar", []string{"bias", "scale", "x"}, []string{"x", "scale"}},
		{"alltypes", []string{"f64", "i16", "i32", "i8", "u16", "u32", "u64", "u8"}, []string{"f64", "i8", "i16", "i32", "u8", "u16", "u32", "u64"}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			s := requestSchema(t, buildDoc(t, tt.model))
			if got := keys(s.Properties); !slices.Equal(got, tt.props) {
				t.Errorf("properties = %v, want %v", got, tt.props)
			}
			if !slices.Equal(s.Required, tt.required) {
				t.Errorf("required = %v, want %v", s.Required, tt.required)
			}
			if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				t.Error("additionalProperties is not false")
			}
		})
	}
}

func TestOutputSchemas(t *testing.T) {
	tests := []struct {
		model, output, want string
	}{
		{"classifier", "probabilities", "array<array[3]<number/float>>"},
		{"classifier", "label", "array<integer/int64>"},
		{"multi_input", "text_upper", "array<string>"},
		{"multi_input", "mask_not", "array<array[2]<boolean>>"},
		{"scalar", "y", "array[1]<number/float>"},
		{"float16", "y", "array<array[4]<number/float min=-65504 max=65504>>"},
		{"zipmap", "probabilities", "array<object<number/float>>"},
		{"zipmap", "scores_by_id", "array<object<number/float>>"},
		{"alltypes", "f64_log", "array<number/double>"},
		{"alltypes", "u64_out", "array<integer min=0>"},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.output, func(t *testing.T) {
			doc := buildDoc(t, tt.model)
			s := doc.Components.Schemas["PredictResponse"].Value
			prop := s.Properties[tt.output]
			if prop == nil {
				t.Fatalf("no property %q", tt.output)
			}
			if got := schemaShape(prop.Value); got != tt.want {
				t.Errorf("schema\n got: %s\nwant: %s", got, tt.want)
			}
			if !slices.Contains(s.Required, tt.output) {
				t.Errorf("output %s not required", tt.output)
			}
		})
	}
	// Labels and non-tensor types are described.
	doc := buildDoc(t, "zipmap")
	desc := doc.Components.Schemas["PredictResponse"].Value.Properties["probabilities"].Value.Description
	for _, want := range []string{"seq(map(string,float32))", "setosa, versicolor, virginica"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description %q lacks %q", desc, want)
		}
	}
	keysDesc := doc.Components.Schemas["PredictResponse"].Value.Properties["scores_by_id"].Value.Items.Value.Description
	if !strings.Contains(keysDesc, "int64") {
		t.Errorf("int64-keyed map description %q does not say so", keysDesc)
	}
}

// TestBatchRule checks what the full request schema accepts against the batch
// rule, as core/tensor's decoder applies it: a list of items under one input
// name is a batch; for a first dimension of N or 1 a single item is accepted
// too (a bare value for rank 1); a rank-0 input takes a plain value only; a
// dynamic dimension may be 0.
func TestBatchRule(t *testing.T) {
	for _, tt := range batchRuleCases {
		t.Run(tt.model+" "+tt.body, func(t *testing.T) {
			s := requestSchema(t, buildDoc(t, tt.model))
			err := s.VisitJSON(mustJSON(t, tt.body), openapi3.MultiErrors())
			if (err == nil) != tt.ok {
				t.Errorf("accepted = %v, want %v (err: %v)", err == nil, tt.ok, err)
			}
		})
	}
}

var batchRuleCases = []struct {
	model string
	body  string
	ok    bool
}{
	{"classifier", `{"input": [[1,2,3,4],[5,6,7,8]]}`, true},
	{"classifier", `{"input": [1,2,3,4]}`, true},
	{"classifier", `{"input": [[1,2,3,4]]}`, true},
	{"classifier", `{"input": [1,2,3]}`, false},
	{"classifier", `{"input": [[1,2,3,4],[5,6,7]]}`, false},
	{"classifier", `{"input": []}`, true}, // an empty batch, as the typed decoder reads it
	{"classifier", `{"input": [[]]}`, false},
	{"classifier", `{"input": 1}`, false},
	{"classifier", `{"input": [[[1,2,3,4]]]}`, false},
	{"classifier", `{"input": [["a","b","c","d"]]}`, false},
	{"classifier", `{}`, false},
	{"classifier", `{"input": [1,2,3,4], "other": 1}`, false},
	{"scalar", `{"x": 1.5, "scale": 2}`, true},
	{"scalar", `{"x": 1.5, "scale": [2]}`, true},
	{"scalar", `{"x": 1.5, "scale": [2], "bias": 0.5}`, true},
	{"scalar", `{"x": [1.5], "scale": 2}`, false},
	{"scalar", `{"x": 1.5, "scale": [2, 3]}`, false},
	{"scalar", `{"scale": 2}`, false},
	{"multi_input", `{"features": [[1,2,3]], "ids": [[1,2]], "mask": [[true,false]], "text": ["a"]}`, true},
	{"multi_input", `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a"}`, true},
	{"multi_input", `{"features": [1,2,3], "ids": [1.5,2], "mask": [true,false], "text": "a"}`, false},
	{"multi_input", `{"features": [1,2,3], "ids": [1,2], "mask": [1,0], "text": "a"}`, false},
	{"multi_input", `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": 1}`, false},
	{"fixed_shape", `{"image": ` + nested([]int{3, 4, 4}) + `}`, true},
	{"fixed_shape", `{"image": [` + nested([]int{3, 4, 4}) + `]}`, true},
	{"fixed_shape", `{"image": [` + nested([]int{3, 4, 4}) + `,` + nested([]int{3, 4, 4}) + `]}`, false},
	{"fixed_shape", `{"image": ` + nested([]int{3, 4, 3}) + `}`, false},
	{"alltypes", allTypes(`[1]`, `[127]`), true},
	{"alltypes", allTypes(`[1]`, `[128]`), false},
	{"alltypes", allTypes(`[-1]`, `[1]`), true},
	{"alltypes", allTypesU8(`[256]`), false},
	{"alltypes", allTypesU8(`[-1]`), false},
	{"float16", `{"x": [1, 2, 3, 65504]}`, true},
	{"float16", `{"x": [1, 2, 3, 70000]}`, false},
	{"multi_input", `{"features": [1,2,3], "ids": [1.0,2], "mask": [true,false], "text": "a"}`, true},
	{"multi_input", `{"features": [1,2,3], "ids": [1e2,2], "mask": [true,false], "text": "a"}`, true},
	{"multi_input", `{"features": [1,2,3], "ids": [9223372036854775807,2], "mask": [true,false], "text": "a"}`, true},
	{"multi_input", `{"features": [1,2,3], "ids": [1,2], "mask": ["true",false], "text": "a"}`, false},
	{"multi_input", `{"features": [[1,2,3]], "ids": [[1,2]], "mask": [[true,false]], "text": []}`, true},
	{"multi_input", `{"features": [], "ids": [], "mask": [], "text": []}`, true},
	{"alltypes", `{"f64": [1e308], "i8": [-128], "i16": [-32768], "i32": [-2147483648], "u8": [255], "u16": [65535], "u32": [4294967295], "u64": [18446744073709551615]}`, true},
	{"alltypes", `{"f64": [1], "i8": [1], "i16": [32768], "i32": [1], "u8": [1], "u16": [1], "u32": [1], "u64": [1]}`, false},
	{"alltypes", `{"f64": [1], "i8": [1], "i16": [1], "i32": [2147483648], "u8": [1], "u16": [1], "u32": [1], "u64": [1]}`, false},
	{"alltypes", `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": [1], "u16": [65536], "u32": [1], "u64": [1]}`, false},
	{"alltypes", `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": [1], "u16": [1], "u32": [4294967296], "u64": [1]}`, false},
	{"alltypes", `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": [1], "u16": [1], "u32": [1], "u64": [-1]}`, false},
	{"alltypes", `{"f64": [1], "i8": [1.5], "i16": [1], "i32": [1], "u8": [1], "u16": [1], "u32": [1], "u64": [1]}`, false},
	{"scalar", `{"x": 1.5, "scale": []}`, false},
	{"scalar", `{"x": 1.5, "scale": 2, "bias": null}`, false},
	{"float16", `{"x": [[1, 2, 3, 4]]}`, true},
}

// nested writes a JSON array of the given shape filled with 1.
func nested(shape []int) string {
	if len(shape) == 0 {
		return "1"
	}
	parts := make([]string, shape[0])
	for i := range parts {
		parts[i] = nested(shape[1:])
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func allTypes(f64, i8 string) string {
	return `{"f64": ` + f64 + `, "i8": ` + i8 + `, "i16": [1], "i32": [1], "u8": [1], "u16": [1], "u32": [4294967295], "u64": [1]}`
}

func allTypesU8(u8 string) string {
	return `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": ` + u8 + `, "u16": [1], "u32": [1], "u64": [1]}`
}

// TestMetricsRepresentations: GET /metrics documents the JSON record and
// both Prometheus expositions, and the statistics their schema.
func TestMetricsRepresentations(t *testing.T) {
	doc := buildDoc(t, "classifier")
	content := doc.Paths.Value("/metrics").Get.Responses.Value("200").Value.Content
	var media []string
	for k := range content {
		media = append(media, k)
	}
	slices.Sort(media)
	if want := []string{"application/json", "application/openmetrics-text", "text/plain"}; !slices.Equal(media, want) {
		t.Errorf("/metrics media types = %v, want %v", media, want)
	}
	for _, path := range []string{"/v2/models/{model_name}/stats", "/v2/models/{model_name}/versions/{model_version}/stats"} {
		mt := doc.Paths.Value(path).Get.Responses.Value("200").Value.Content.Get("application/json")
		if mt.Schema.Ref != "#/components/schemas/V2Stats" || mt.Schema.Value == nil {
			t.Errorf("%s: schema %q", path, mt.Schema.Ref)
		}
		if err := mt.Schema.Value.VisitJSON(mt.Example); err != nil {
			t.Errorf("%s: the example does not fit the schema: %v", path, err)
		}
	}
}
