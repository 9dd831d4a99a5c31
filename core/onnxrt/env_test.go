//go:build !windows

package onnxrt

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A library that lacks the C API svc is built against is refused with its
// version and the minimum, before ONNX Runtime is initialised from it; the
// real library passes the same check.
func TestLoadRefusesTooOldLibrary(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	lib := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, "testdata/oldort.c").CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in library: %v\n%s", err, out)
	}
	var tooOld *TooOldError
	if err := checkAPI(lib); !errors.As(err, &tooOld) || tooOld.Version != "1.23.2" {
		t.Fatalf("checkAPI(1.23.2) = %v, want a *TooOldError for 1.23.2", err)
	}
	_, err := Load(Search{EnvValue: lib}, false)
	if err == nil {
		t.Fatal("Load accepted a library without C API 24")
	}
	for _, want := range []string{lib, "ONNX Runtime 1.23.2 is too old: svc needs 1.24 or newer (C API 24)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load error %q lacks %q", err, want)
		}
	}
	if real := os.Getenv("ONNXRUNTIME_TEST_LIB"); real != "" {
		if err := checkAPI(filepath.Join(real, LibraryFileNames()[0])); err != nil {
			t.Errorf("the test library fails the check: %v", err)
		}
	}
}
