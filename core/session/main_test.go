package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}()

func TestMain(m *testing.M) { onnxrttest.Main(m) }

func model(name string) string { return filepath.Join(repoRoot, "testdata", "models", name) }
