package nvidia_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/nvidia"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func TestPartOf(t *testing.T) {
	tests := []struct{ give, want string }{
		{"libcuda.so.1", "NVIDIA driver"},
		{"libcudart.so.13", "CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime"},
		{"libcublasLt.so.13", "CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas"},
		{"libcudnn.so.9", "cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13"},
		{"libcudnn_graph.so.9", "cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13"},
		{"libnvinfer.so.10", "TensorRT 10: install TensorRT 10 for CUDA 13"},
		{"libnvonnxparser.so.10", "TensorRT 10: install TensorRT 10 for CUDA 13"},
		{"libfoo.so.1", ""},
	}
	for _, tt := range tests {
		if got := nvidia.PartOf(tt.give); got != tt.want {
			t.Errorf("PartOf(%s) = %q, want %q", tt.give, got, tt.want)
		}
	}
	err := nvidia.Diagnose([]string{"libcuda.so.1", "libfoo.so.1", "libcublas.so.13", "libcublasLt.so.13", "libcudart.so.13"})
	want := "libcuda.so.1 not found (NVIDIA driver); libfoo.so.1 not found; libcublas.so.13 and libcublasLt.so.13 not found (CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas); libcudart.so.13 not found (CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime)"
	var missing *nvidia.MissingError
	if err.Error() != want || !errors.As(err, &missing) || len(missing.Names) != 5 {
		t.Errorf("Diagnose = %q\nwant       %q", err, want)
	}
}

var offered = []string{"TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"}

// The diagnosis on this machine (no NVIDIA GPU, no CUDA) with the real
// ONNX Runtime 1.29.0 provider libraries from 'make lib-cuda', read by
// svc's own ELF resolver: what is missing, and what it is part of. The
// "no driver" case puts STUB CUDA runtime libraries (generated, they do
// nothing) on LD_LIBRARY_PATH.
func TestCheckRealProviderLibraries(t *testing.T) {
	cudaDir := providertest.CUDALibDir(t)
	plainDir := t.TempDir()
	if err := os.Symlink(filepath.Join(cudaDir, "libonnxruntime.so.1"), filepath.Join(plainDir, "libonnxruntime.so.1")); err != nil {
		t.Fatal(err)
	}
	stubs := t.TempDir()
	providertest.StubCUDA(t, stubs, filepath.Join(cudaDir, "libonnxruntime_providers_cuda.so"), false)

	const (
		cublas = "libcublasLt.so.13 and libcublas.so.13 not found (CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas)"
		curand = "libcurand.so.10 not found (CUDA 13 cuRAND: install CUDA 13 or pip install nvidia-curand)"
		cudart = "libcudart.so.13 not found (CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime)"
		driver = "libcuda.so.1 not found (NVIDIA driver)"
		cudnn  = "libcudnn.so.9 not found (cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13)"
		trt    = "libnvinfer.so.10 and libnvonnxparser.so.10 not found (TensorRT 10: install TensorRT 10 for CUDA 13)"
	)
	tests := []struct {
		name    string
		dir     string
		ldPath  string
		libs    []string
		dlopen  []string
		want    string
		wantSub string
	}{
		{
			name: "cuda, no provider libraries", dir: plainDir, libs: []string{"shared", "cuda"},
			wantSub: "libonnxruntime_providers_shared.so is not beside the ONNX Runtime library in " + plainDir + " (get it with 'make lib-cuda'",
		},
		{
			name: "cuda, no CUDA runtime", dir: cudaDir, libs: []string{"shared", "cuda"}, dlopen: []string{"libcudnn.so.9"},
			want: strings.Join([]string{cublas, curand, cudart, driver, cudnn}, "; "),
		},
		{
			name: "cuda, STUB CUDA runtime but no driver", dir: cudaDir, ldPath: stubs, libs: []string{"shared", "cuda"}, dlopen: []string{"libcudnn.so.9"},
			want: driver,
		},
		{
			name: "tensorrt, no CUDA runtime", dir: cudaDir, libs: []string{"shared", "cuda", "tensorrt"},
			want: strings.Join([]string{cublas, curand, cudart, driver, trt, cudnn}, "; "),
		},
		{
			name: "tensorrt, STUB CUDA runtime but no TensorRT and no driver", dir: cudaDir, ldPath: stubs, libs: []string{"shared", "cuda", "tensorrt"},
			want: driver + "; " + trt,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LD_LIBRARY_PATH", tt.ldPath)
			h := providers.Host{LibraryProviders: offered, LibraryDir: tt.dir, LibraryVersion: "1.29.0"}
			err := nvidia.Check(h, "CUDAExecutionProvider", tt.libs, tt.dlopen...)
			switch {
			case err == nil:
				t.Fatal("usable")
			case tt.want != "" && err.Error() != tt.want:
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			case tt.wantSub != "" && !strings.Contains(err.Error(), tt.wantSub):
				t.Errorf("error\n%s\nlacks\n%s", err, tt.wantSub)
			}
		})
	}
}

// A provider library of another ONNX Runtime version is refused before
// anything loads it (ONNX Runtime would crash in it): here a generated
// library that embeds "1.24.1" where the CUDA provider library would be.
func TestCheckRefusesAnotherVersion(t *testing.T) {
	cudaDir := providertest.CUDALibDir(t)
	dir := t.TempDir()
	for _, f := range []string{"libonnxruntime.so.1", "libonnxruntime_providers_shared.so"} {
		if err := os.Symlink(filepath.Join(cudaDir, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	providertest.BuildLib(t, dir, providertest.Lib{Soname: "libonnxruntime_providers_cuda.so",
		Source: `const char *svc_ort_version(void) { return "1.24.1"; } const char *svc_other(void) { return "1.3.9"; }`})
	h := providers.Host{LibraryProviders: offered, LibraryDir: dir, LibraryVersion: "1.29.0"}
	err := nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"})
	var v *nvidia.VersionError
	if !errors.As(err, &v) || v.File != "libonnxruntime_providers_cuda.so" || strings.Join(v.Version, ",") != "1.24.1" {
		t.Fatalf("error %v, want a version mismatch naming 1.24.1", err)
	}
	if want := "libonnxruntime_providers_cuda.so is not ONNX Runtime 1.29.0 (it has version 1.24.1): provider libraries must be the core library's exact version; refusing to load it"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%s\nwant it to start with\n%s", err, want)
	}
	// The real libraries pass the same check.
	h.LibraryDir = cudaDir
	err = nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"})
	if errors.As(err, &v) {
		t.Errorf("the real 1.29.0 provider libraries: %v", err)
	}
}
