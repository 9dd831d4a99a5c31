package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountModels lays out a directory named "models" the way KServe's storage
// initializer fills /mnt/models: the files given (testdata/models names →
// names in the directory).
func mountModels(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range files {
		copyFile(t, model(from), filepath.Join(dir, to))
	}
	return dir
}

// TestServeModelsDirectory serves the layouts KServe mounts at /mnt/models,
// with and without --name (what a ServingRuntime passes as --name={{.Name}}).
func TestServeModelsDirectory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		args     []string
		wantName string
	}{
		{
			name:     "one .onnx file, named after it",
			files:    map[string]string{"classifier.onnx": "classifier.onnx"},
			wantName: "classifier",
		},
		{
			name:     "one .onnx file, --name",
			files:    map[string]string{"classifier.onnx": "classifier.onnx"},
			args:     []string{"--name", "iris"},
			wantName: "iris",
		},
		{
			name: "model.onnx with external data and other files, --name",
			files: map[string]string{
				"external_data/model.onnx":      "model.onnx",
				"external_data/model.onnx.data": "model.onnx.data",
				"README.md":                     "README.md",
				"classifier.onnx":               "other.onnx",
			},
			args:     []string{"--name", "ext-1.0_b"},
			wantName: "ext-1.0_b",
		},
		{
			name:     "model.onnx without --name: the directory's name",
			files:    map[string]string{"classifier.onnx": "model.onnx"},
			wantName: "models",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mountModels(t, tt.files)
			s := startServer(t, append([]string{dir}, tt.args...)...)
			if got := s.get("/health").JSON(t)["model"]; got != tt.wantName {
				t.Fatalf("/health model = %v, want %q", got, tt.wantName)
			}
			if got := s.get("/info").JSON(t)["name"]; got != tt.wantName {
				t.Fatalf("/info name = %v, want %q", got, tt.wantName)
			}
			if r := s.get("/v2/models/" + tt.wantName + "/ready"); r.Status != 200 {
				t.Fatalf("/v2/models/%s/ready = %d %s", tt.wantName, r.Status, r.Body)
			}
			if r := s.get("/v2/models/" + tt.wantName); r.Status != 200 || r.JSON(t)["name"] != tt.wantName {
				t.Fatalf("/v2/models/%s = %d %s", tt.wantName, r.Status, r.Body)
			}
			if r := s.get("/v2/models/not-" + tt.wantName + "/ready"); r.Status != 404 {
				t.Fatalf("/v2/models/not-%s/ready = %d, want 404", tt.wantName, r.Status)
			}
			if s.stop(syscall.SIGTERM) != 0 {
				t.Fatalf("exit after SIGTERM is not 0; stderr:\n%s", s.stderr)
			}
		})
	}
}

func TestServeNameAndDirectoryErrors(t *testing.T) {
	t.Parallel()
	several := mountModels(t, map[string]string{"classifier.onnx": "a.onnx", "scalar.onnx": "b.onnx"})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wants    []string
	}{
		{"several .onnx files and no model.onnx", []string{several}, 1, []string{"several .onnx files (a.onnx, b.onnx)"}},
		{"empty --name", []string{model("classifier.onnx"), "--name", ""}, 2, []string{"--name is empty"}},
		{"--name with a slash", []string{model("classifier.onnx"), "--name", "a/b"}, 2, []string{`--name "a/b"`, "letters, digits"}},
		{"--name with a space", []string{model("classifier.onnx"), "--name", "my model"}, 2, []string{`--name "my model"`}},
		{"--name too long", []string{model("classifier.onnx"), "--name", strings.Repeat("m", 254)}, 2, []string{"254 characters long; at most 253"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runSvc(t, nil, append(append([]string{"serve"}, tt.args...), "--host", "127.0.0.1", "--port", "0")...)
			oneLineError(t, code, stderr, tt.wantCode, tt.wants...)
		})
	}
}
