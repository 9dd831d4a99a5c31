package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestServedOpenAPIDocuments fetches /openapi.json from the real server for
// every generated model and every fetched third-party model, validates each
// with kin-openapi and with @apidevtools/swagger-parser, and runs the
// document's own example through /predict.
func TestServedOpenAPIDocuments(t *testing.T) {
	t.Parallel()
	sequential(t)
	paths, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	paths = append(paths,
		filepath.Join(repoRoot, "testdata", "models", "external_data"),
		filepath.Join(repoRoot, "examples", "demo"),
		thirdParty(t, "paddleocr-cls"), thirdParty(t, "paddleocr-det"), thirdParty(t, "silero-vad"),
	)
	dir := t.TempDir()
	var files []string
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".onnx")
		if name == "model" {
			name = filepath.Base(filepath.Dir(p))
		}
		t.Run(name, func(t *testing.T) {
			s := startServer(t, p)
			r := s.get("/openapi.json")
			if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("GET /openapi.json = %d %q", r.Status, r.Header.Get("Content-Type"))
			}
			doc, err := openapi3.NewLoader().LoadFromData(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("kin-openapi: %v", err)
			}
			file := filepath.Join(dir, name+".json")
			if err := os.WriteFile(file, r.Body, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, file)

			// The example body of the document is accepted by the server.
			op := doc.Paths.Value("/predict").Post
			ex := op.RequestBody.Value.Content.Get("application/json").Example
			if ex == nil {
				if name == "slow" || name == "fixed_shape" {
					return
				}
				t.Fatalf("no example body")
			}
			body, _ := json.Marshal(ex)
			want := 200
			switch name {
			case "failing":
				want = 500 // its example has 1 element; the model needs 6
			case "silero-vad":
				// Valid by the schema, but the model needs a realistic
				// audio chunk: a generated example cannot know that.
				want = 500
			}
			if got := s.predict(string(body)); got.Status != want {
				t.Fatalf("example %s: %d %s", body, got.Status, got.Body)
			}
		})
	}
	// The independent validator, on every document at once.
	tools := os.Getenv("SVC_NODE_TOOLS")
	if tools == "" {
		tools = filepath.Join(repoRoot, "build", "node")
	}
	if _, err := os.Stat(filepath.Join(tools, "node_modules", "@apidevtools", "swagger-parser")); err != nil {
		t.Fatalf("@apidevtools/swagger-parser is not installed in %s: run build/node-tools.sh (make test does)", tools)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(repoRoot, "openapi", "testdata", "swagger-parser-validate.cjs"), tools}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var results []struct {
		File  string `json:"file"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(files) || len(files) < 14 {
		t.Fatalf("validated %d of %d documents", len(results), len(files))
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("swagger-parser rejects %s: %s", filepath.Base(r.File), r.Error)
		}
	}
}
