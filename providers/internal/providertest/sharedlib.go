package providertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Lib describes a tiny shared library for a test, built with the C
// compiler: its soname, C source, the built libraries it links against
// (their sonames become DT_NEEDED entries) and extra linker flags (e.g.
// "-Wl,-rpath,$ORIGIN/x", "-Wl,--version-script=...").
type Lib struct {
	Soname string
	Source string
	Needs  []string
	Flags  []string
}

// BuildLib compiles l into dir/<soname> and returns its path.
func BuildLib(t testing.TB, dir string, l Lib) string {
	t.Helper()
	p, err := CompileLib(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CompileLib is BuildLib for code without a testing.TB.
func CompileLib(dir string, l Lib) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "svc-lib-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "lib.c")
	if err := os.WriteFile(src, []byte(l.Source+"\n"), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, l.Soname)
	args := []string{"-shared", "-fPIC", "-o", out, src, "-Wl,-soname," + l.Soname, "-Wl,--no-as-needed"}
	args = append(args, l.Needs...)
	args = append(args, l.Flags...)
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", cc, strings.Join(args, " "), err, b)
	}
	return out, nil
}

// CUDALibDir returns build/lib/<os>-<arch>-cuda of the module: the core
// ONNX Runtime library with its CUDA and TensorRT provider libraries, as
// 'make lib-cuda' leaves them. It fails the test when they are not there,
// and skips it under go test -short (the fast tier, which has ONNX Runtime
// alone).
func CUDALibDir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs ONNX Runtime's CUDA provider libraries (make lib-cuda); the full suite (make test) runs it")
	}
	wd, _ := os.Getwd()
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err != nil {
			continue
		}
		dir := filepath.Join(d, "build", "lib", runtime.GOOS+"-"+runtime.GOARCH+"-cuda")
		if _, err := os.Stat(filepath.Join(dir, "libonnxruntime_providers_cuda.so")); err != nil {
			t.Fatalf("no CUDA provider libraries in %s: run 'make lib-cuda' (make test does it)", dir)
		}
		return dir
	}
	t.Fatalf("no go.mod above %s", wd)
	return ""
}
