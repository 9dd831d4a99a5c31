package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/svc-dev/svc/core/onnxrt"
)

var repoRoot string

func TestMain(m *testing.M) {
	wd, _ := os.Getwd()
	repoRoot = filepath.Dir(wd)
	dir := os.Getenv("ONNXRUNTIME_TEST_LIB")
	if dir == "" {
		dir = filepath.Join(repoRoot, "build", "lib", runtime.GOOS+"-"+runtime.GOARCH)
	}
	env, err := onnxrt.Load(onnxrt.Search{EnvValue: filepath.Join(dir, "libonnxruntime.so.1")}, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v (run 'make lib')\n", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Close()
	os.Exit(code)
}

func model(name string) string { return filepath.Join(repoRoot, "testdata", "models", name) }
