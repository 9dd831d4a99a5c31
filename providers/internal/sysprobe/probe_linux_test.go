//go:build linux && cgo

package sysprobe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

// buildLibs compiles liba.so and libb.so, which needs liba.so (by soname,
// with no run path), the way libonnxruntime_providers_cuda.so needs
// libonnxruntime_providers_shared.so.
func buildLibs(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.c", "int svc_a(void) { return 1; }\n")
	write("b.c", "int svc_a(void);\nint svc_b(void) { return svc_a() + 1; }\n")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,liba.so", "-o", "liba.so", "a.c"},
		{"-shared", "-fPIC", "-o", "libb.so", "b.c", "-L.", "-la"},
	} {
		cmd := exec.Command(cc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	dir := buildLibs(t)
	a, b := filepath.Join(dir, "liba.so"), filepath.Join(dir, "libb.so")
	var p sysprobe.Probe
	if err := p.Load(a, b); err != nil {
		t.Errorf("Load(liba, libb) = %v: a library already open should satisfy the next one's dependency", err)
	}
	err := p.Load(b)
	if err == nil || !strings.Contains(err.Error(), "liba.so: cannot open shared object file") {
		t.Errorf("Load(libb) alone = %v, want the loader's message about liba.so", err)
	}
	err = p.Load(filepath.Join(dir, "libnothere.so"))
	if err == nil || !strings.Contains(err.Error(), "libnothere.so") {
		t.Errorf("Load(missing) = %v", err)
	}
	if err := p.Load(); err != nil {
		t.Errorf("Load() = %v", err)
	}
}

func TestLocateAndExists(t *testing.T) {
	dir := buildLibs(t)
	a := filepath.Join(dir, "liba.so")
	got, err := sysprobe.Locate(a, "svc_a")
	if err != nil || got != a {
		t.Errorf("Locate = %q, %v; want %q", got, err, a)
	}
	if _, err := sysprobe.Locate("libsvc-not-anywhere.so", "x"); err == nil {
		t.Error("Locate found a library that does not exist")
	}
	var p sysprobe.Probe
	if !p.Exists(a) || p.Exists(filepath.Join(dir, "nope")) {
		t.Error("Exists is wrong")
	}
}

// Without an NVIDIA driver the error names the driver library; with one,
// the count is whatever the driver says.
func TestCUDADevices(t *testing.T) {
	n, err := sysprobe.Probe{}.CUDADevices()
	if err != nil {
		if !strings.Contains(err.Error(), "NVIDIA driver") {
			t.Errorf("error %q does not say what is missing", err)
		}
		if n != 0 {
			t.Errorf("%d devices with an error", n)
		}
		return
	}
	t.Logf("%d CUDA devices", n)
}
