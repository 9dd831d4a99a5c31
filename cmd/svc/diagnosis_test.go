package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cudaLibDir is build/lib/linux-amd64-cuda: the core library with ONNX
// Runtime 1.29.0's real CUDA and TensorRT provider libraries ('make
// lib-cuda').
func cudaLibDir(t *testing.T) string {
	t.Helper()
	skipShort(t, "needs ONNX Runtime's CUDA provider libraries (make lib-cuda)")
	dir := filepath.Join(repoRoot, "build", "lib", "linux-amd64-cuda")
	if _, err := os.Stat(filepath.Join(dir, "libonnxruntime_providers_cuda.so")); err != nil {
		t.Fatalf("no CUDA provider libraries in %s: run 'make lib-cuda' (make test does it)", dir)
	}
	return dir
}

// stubCUDA writes STUB CUDA libraries (generated; they report no device)
// for the real CUDA provider library into a new directory.
func stubCUDA(t *testing.T, driver bool) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"run", "./providers/internal/providertest/stubcuda", "-provider", filepath.Join(cudaLibDir(t), "libonnxruntime_providers_cuda.so")}
	if driver {
		args = append(args, "-driver")
	}
	cmd := exec.Command("go", append(args, dir)...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stub CUDA libraries: %v\n%s", err, out)
	}
	return dir
}

// nodesLine is the banner's node placement.
var nodesLine = regexp.MustCompile(`(?m)^\s+nodes\s+(.*)$`)

const (
	diagCUBLAS = "libcublasLt.so.13 and libcublas.so.13 not found (CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas)"
	diagCURAND = "libcurand.so.10 not found (CUDA 13 cuRAND: install CUDA 13 or pip install nvidia-curand)"
	diagCUDART = "libcudart.so.13 not found (CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime)"
	diagDriver = "libcuda.so.1 not found (NVIDIA driver)"
	diagCUDNN  = "libcudnn.so.9 not found (cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13)"
)

// 'svc providers' of a cuda build with the real ONNX Runtime 1.29.0
// provider libraries names what is missing on this machine, library by
// library: without the provider libraries, without a CUDA runtime, with a
// STUB CUDA runtime but no driver, and with STUB CUDA libraries including
// the driver (no device).
func TestProvidersDiagnosis(t *testing.T) {
	t.Parallel()
	bin := cudaBin(t)
	cudaLib := filepath.Join(cudaLibDir(t), "libonnxruntime.so.1")
	tests := []struct {
		name string
		lib  string
		ld   func(t *testing.T) string
		want string
	}{
		{
			name: "no provider libraries",
			lib:  ortLib,
			want: "libonnxruntime_providers_shared.so is not beside the ONNX Runtime library in " + filepath.Dir(ortLib) +
				" (get it with 'make lib-cuda', or npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9, Plugins/Linux/x64/); " +
				"no NVIDIA driver: libcuda.so.1: cannot open shared object file: No such file or directory",
		},
		{
			name: "no CUDA runtime",
			lib:  cudaLib,
			want: strings.Join([]string{diagCUBLAS, diagCURAND, diagCUDART, diagDriver, diagCUDNN}, "; "),
		},
		{
			name: "STUB CUDA runtime, no driver",
			lib:  cudaLib,
			ld:   func(t *testing.T) string { return stubCUDA(t, false) },
			want: diagDriver,
		},
		{
			name: "STUB CUDA runtime and driver, no device",
			lib:  cudaLib,
			ld:   func(t *testing.T) string { return stubCUDA(t, true) },
			want: "NVIDIA driver: cuInit: CUDA_ERROR_NO_DEVICE",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"ONNXRUNTIME_LIB=" + tt.lib, "LD_LIBRARY_PATH="}
			if tt.ld != nil {
				env[1] = "LD_LIBRARY_PATH=" + tt.ld(t)
			}
			code, stdout, stderr := runCmd(t, cmdFor(t, bin, env, "providers"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			cuda := row(t, stdout, "cuda")
			if got := strings.Join(cuda[:5], " "); got != "cuda CUDAExecutionProvider yes yes no" {
				t.Errorf("cuda row starts %q", got)
			}
			if why := strings.Join(cuda[5:], " "); why != tt.want {
				t.Errorf("cuda: why not\n%s\nwant\n%s", why, tt.want)
			}
			if got := strings.Join(row(t, stdout, "cpu"), " "); got != "cpu CPUExecutionProvider yes yes yes -" {
				t.Errorf("cpu row = %q", got)
			}
		})
	}
}

// 'svc serve --provider cuda' with the real provider libraries and no CUDA
// falls back to CPU with the same diagnosis in its one warning.
func TestServeCUDADiagnosisFallsBack(t *testing.T) {
	t.Parallel()
	env := []string{"ONNXRUNTIME_LIB=" + filepath.Join(cudaLibDir(t), "libonnxruntime.so.1"), "LD_LIBRARY_PATH="}
	s := startServerBin(t, cudaBin(t), env, model("classifier.onnx"), "--provider", "cuda")
	if m := nodesLine.FindStringSubmatch(s.stdout.String()); m == nil || m[1] != "all on CPUExecutionProvider" {
		t.Errorf("banner nodes line %q, want all on the CPU", m)
	}
	warns := warnings(s)
	if len(warns) != 1 {
		t.Fatalf("want one warning, got %d\n%s", len(warns), s.stderr)
	}
	want := strings.Join([]string{diagCUBLAS, diagCURAND, diagCUDART, diagDriver, diagCUDNN}, "; ")
	if w := warns[0]; w["requested"] != "cuda" || w["fallback"] != "cpu" || w["reason"] != want {
		t.Errorf("warning = %v, want the library-level diagnosis %q", w, want)
	}
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != 200 || !strings.Contains(string(r.Body), `"label":[0]`) {
		t.Errorf("/predict on the fallback: %d %s", r.Status, r.Body)
	}
}
