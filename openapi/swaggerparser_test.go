package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/openapi"
)

// nodeTools is where build/node-tools.sh installs the Node tools; the
// SVC_NODE_TOOLS environment variable overrides it.
func nodeTools(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs Node and the OpenAPI validator (make tools); the full suite (make test) runs it")
	}
	dir := os.Getenv("SVC_NODE_TOOLS")
	if dir == "" {
		dir = filepath.Join("..", "build", "node")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed; the independent OpenAPI validator needs it (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(abs, "node_modules", "@apidevtools", "swagger-parser", "package.json")); err != nil {
		t.Fatalf("@apidevtools/swagger-parser is not installed in %s: run build/node-tools.sh (%v)", abs, err)
	}
	return abs
}

type parserResult struct {
	File  string `json:"file"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

func runSwaggerParser(t *testing.T, files []string) map[string]parserResult {
	t.Helper()
	args := append([]string{filepath.Join("testdata", "swagger-parser-validate.cjs"), nodeTools(t)}, files...)
	cmd := exec.Command("node", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var results []parserResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("parsing the validator's output %q: %v", out, err)
	}
	byFile := map[string]parserResult{}
	for _, r := range results {
		byFile[r.File] = r
	}
	if len(byFile) != len(files) {
		t.Fatalf("validator answered for %d of %d files", len(byFile), len(files))
	}
	return byFile
}

// TestSwaggerParser validates every derived document with
// @apidevtools/swagger-parser, a validator independent of kin-openapi. A
// broken document is fed along to prove the tool can say no.
func TestSwaggerParser(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range fixtureNames(t) {
		data, err := openapi.MarshalDocument(buildDoc(t, name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	// Negative control: a response without a description and a dangling $ref.
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `"#/components/schemas/PredictRequest"`, `"#/components/schemas/Nope"`, 1)
	if bad == string(good) {
		t.Fatal("negative control was not altered")
	}
	badPath := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(badPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}

	results := runSwaggerParser(t, append(files, badPath))
	for _, f := range files {
		if r := results[f]; !r.OK {
			t.Errorf("%s: swagger-parser: %s", filepath.Base(f), r.Error)
		}
	}
	if r := results[badPath]; r.OK {
		t.Error("swagger-parser accepted a document with a dangling $ref: the check proves nothing")
	}
}
