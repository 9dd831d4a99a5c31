package openapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/openapi"
	"github.com/svc-dev/svc/transport/rest"
)

// fixtureNames lists the test models under testdata/info.
func fixtureNames(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "info", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	slices.Sort(names)
	// Guard against the glob silently finding nothing (or losing a model).
	for _, want := range []string{"alltypes", "classifier", "detector", "fixed_shape", "float16", "multi_input", "ppocr_cls", "scalar", "zipmap"} {
		if !slices.Contains(names, want) {
			t.Fatalf("fixture %s missing from testdata/info (have %v)", want, names)
		}
	}
	return names
}

func loadInfo(t testing.TB, name string) core.ModelInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "info", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var info rest.Info
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return info.Model()
}

func buildDoc(t testing.TB, name string) *openapi3.T {
	t.Helper()
	doc, err := openapi.Build(loadInfo(t, name))
	if err != nil {
		t.Fatalf("Build(%s): %v", name, err)
	}
	return doc
}

func newValidator(t testing.TB, name string) *openapi.Validator {
	t.Helper()
	v, err := openapi.NewValidator(buildDoc(t, name))
	if err != nil {
		t.Fatalf("NewValidator(%s): %v", name, err)
	}
	return v
}

// requestSchema returns the resolved PredictRequest schema of a document.
func requestSchema(t testing.TB, doc *openapi3.T) *openapi3.Schema {
	t.Helper()
	op := doc.Paths.Value("/predict").Post
	s := op.RequestBody.Value.Content.Get("application/json").Schema
	if s.Ref != "#/components/schemas/PredictRequest" || s.Value == nil {
		t.Fatalf("request schema ref %q resolved=%v", s.Ref, s.Value != nil)
	}
	return s.Value
}

// example returns the /predict example body of a document, or nil.
func example(t testing.TB, doc *openapi3.T) any {
	t.Helper()
	return doc.Paths.Value("/predict").Post.RequestBody.Value.Content.Get("application/json").Example
}

// mustJSON parses a JSON text into its generic form.
func mustJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}
