package providertest

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// StubCUDA builds STUB CUDA libraries into dir for tests on machines
// without an NVIDIA GPU: for every CUDA library the provider library at
// providerLib imports versioned symbols from (libcudart.so.13,
// libcublas.so.13, libcublasLt.so.13), a library of that soname defining
// exactly those symbols under that version, plus libcurand.so.10 and
// libcudnn.so.9 (empty) and, with driver, libcuda.so.1. They do nothing: the
// runtime reports cudaErrorNoDevice (100) for every call and no devices,
// cuBLAS CUBLAS_STATUS_NOT_INITIALIZED, the driver's cuInit
// CUDA_ERROR_NO_DEVICE. With them the real provider library loads and ONNX
// Runtime reaches its genuine "no CUDA-capable device" path. It returns the
// sonames built.
func StubCUDA(t testing.TB, dir, providerLib string, driver bool) []string {
	t.Helper()
	built, err := BuildStubCUDA(dir, providerLib, driver)
	if err != nil {
		t.Fatal(err)
	}
	return built
}

// BuildStubCUDA is StubCUDA for code without a testing.TB (the stubcuda
// command).
func BuildStubCUDA(dir, providerLib string, driver bool) ([]string, error) {
	f, err := elf.Open(providerLib)
	if err != nil {
		return nil, fmt.Errorf("stub CUDA: %w", err)
	}
	imports, err := f.ImportedSymbols()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("stub CUDA: symbols of %s: %w", providerLib, err)
	}
	bySoname := map[string][]string{}
	for _, s := range imports {
		if strings.HasPrefix(s.Library, "libcudart.") || strings.HasPrefix(s.Library, "libcublas") {
			bySoname[s.Library] = append(bySoname[s.Library], s.Name)
		}
	}
	for _, so := range []string{"libcurand.so.10", "libcudnn.so.9"} {
		bySoname[so] = nil
	}
	if driver {
		bySoname["libcuda.so.1"] = []string{"cuInit", "cuDeviceGetCount", "cuDriverGetVersion"}
	}
	var built []string
	for so, syms := range bySoname {
		sort.Strings(syms)
		var src strings.Builder
		src.WriteString("/* STUB " + so + " for svc's tests: no device, every call fails. */\n")
		for _, name := range syms {
			src.WriteString(stubFunc(so, name) + "\n")
		}
		src.WriteString("int svc_stub_marker(void) { return 0; }\n")
		node := so
		if len(syms) == 0 {
			node = "SVC_STUB"
		}
		body := fmt.Sprintf("%s {\n  global: svc_stub_marker; %s\n  local: *;\n};\n", node, joinSyms(syms))
		tmp, err := os.MkdirTemp("", "svc-stub-")
		if err != nil {
			return nil, err
		}
		script := filepath.Join(tmp, "version.map")
		if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		// -Xlinker: the path may hold commas, which -Wl would split at.
		_, err = CompileLib(dir, Lib{Soname: so, Source: src.String(), Flags: []string{"-Xlinker", "--version-script", "-Xlinker", script}})
		os.RemoveAll(tmp)
		if err != nil {
			return nil, err
		}
		built = append(built, so)
	}
	sort.Strings(built)
	return built, nil
}

func joinSyms(syms []string) string {
	var b strings.Builder
	for _, s := range syms {
		b.WriteString(s + "; ")
	}
	return b.String()
}

// stubFunc is the C definition of one stub symbol.
func stubFunc(soname, name string) string {
	const noDevice = `"no CUDA-capable device is detected"`
	switch {
	case name == "cudaGetDeviceCount":
		return "int cudaGetDeviceCount(int *n) { if (n) *n = 0; return 100; }"
	case name == "cudaGetErrorString" || name == "cudaGetErrorName":
		return "const char *" + name + "(int e) { (void)e; return " + noDevice + "; }"
	case name == "__cudaRegisterFatBinary":
		return "static char svc_fatbin[64]; void **__cudaRegisterFatBinary(void *p) { (void)p; return (void **)svc_fatbin; }"
	case strings.HasPrefix(name, "__cuda"):
		return "void " + name + "(void) {}"
	case strings.Contains(name, "GetStatusName") || strings.Contains(name, "GetStatusString"):
		return "const char *" + name + "(int s) { (void)s; return \"CUBLAS_STATUS_NOT_INITIALIZED\"; }"
	case name == "cuDeviceGetCount":
		return "int cuDeviceGetCount(int *n) { if (n) *n = 0; return 100; }"
	case name == "cuDriverGetVersion":
		return "int cuDriverGetVersion(int *v) { if (v) *v = 13000; return 0; }"
	case strings.HasPrefix(soname, "libcublas"):
		return "int " + name + "(void) { return 1; }"
	}
	return "int " + name + "(void) { return 100; }"
}
