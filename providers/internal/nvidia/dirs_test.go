package nvidia_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/nvidia"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The search order: the explicit variable, the active virtualenv (or
// conda prefix), the user's site-packages; newest Python first; only
// directories that exist.
func TestLibraryDirs(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root,
		"explicit",
		"venv/lib/python3.9/site-packages/nvidia/cublas/lib",
		"venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib",
		"venv/lib/python3.11/site-packages/nvidia/cublas/lib",
		"venv/lib/python3.11/site-packages/nvidia/cublas/include",
		"venv/lib/python3.11/site-packages/tensorrt_libs",
		"conda/lib/python3.12/site-packages/nvidia/cudnn/lib",
		"home/.local/lib/python3.12/site-packages/nvidia/cudnn/lib",
		// The CUDA 13 wheels (nvidia-cuda-runtime, nvidia-cublas,
		// nvidia-curand 13.x) share nvidia/cu13/lib; cuDNN keeps its own,
		// as in the GPU machine's /opt/torch/.venv.
		"torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib",
		"torch/.venv/lib/python3.12/site-packages/nvidia/cu13/include",
		"torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib",
		"torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib",
	)
	env := func(vars map[string]string) nvidia.Env {
		return nvidia.Env{Getenv: func(k string) string { return vars[k] }, Home: filepath.Join(root, "home")}
	}
	rel := func(dirs []string) []string {
		out := make([]string, len(dirs))
		for i, d := range dirs {
			out[i], _ = filepath.Rel(root, d)
		}
		return out
	}
	tests := []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"nothing active: the user's site-packages", nil, []string{"home/.local/lib/python3.12/site-packages/nvidia/cudnn/lib"}},
		{
			"explicit and virtualenv",
			map[string]string{nvidia.LibraryPathVar: filepath.Join(root, "explicit") + ":" + filepath.Join(root, "missing"), "VIRTUAL_ENV": filepath.Join(root, "venv"), "CONDA_PREFIX": filepath.Join(root, "conda")},
			[]string{
				"explicit",
				"venv/lib/python3.11/site-packages/nvidia/cublas/lib",
				"venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib",
				"venv/lib/python3.11/site-packages/tensorrt_libs",
				"venv/lib/python3.9/site-packages/nvidia/cublas/lib",
				"home/.local/lib/python3.12/site-packages/nvidia/cudnn/lib",
			},
		},
		{
			"a virtualenv with the CUDA 13 wheels",
			map[string]string{"VIRTUAL_ENV": filepath.Join(root, "torch", ".venv")},
			[]string{
				"torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib",
				"torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib",
				"torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib",
				"home/.local/lib/python3.12/site-packages/nvidia/cudnn/lib",
			},
		},
		{
			"conda without a virtualenv",
			map[string]string{"CONDA_PREFIX": filepath.Join(root, "conda")},
			[]string{"conda/lib/python3.12/site-packages/nvidia/cudnn/lib", "home/.local/lib/python3.12/site-packages/nvidia/cudnn/lib"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rel(nvidia.LibraryDirs(env(tt.vars))); !slices.Equal(got, tt.want) {
				t.Errorf("dirs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// CUDA installed by pip in a virtualenv (here STUB libraries, generated, in
// the wheels' layout) is found: only the driver is missing. With a (stub)
// driver in $SVC_CUDA_LIBRARY_PATH everything resolves, svc preloads the
// libraries from those directories in dependency order, and the driver it
// preloaded answers the device query: no device.
func TestCheckFindsPipCUDA(t *testing.T) {
	cudaDir := providertest.CUDALibDir(t)
	provider := filepath.Join(cudaDir, "libonnxruntime_providers_cuda.so")
	stubs := t.TempDir()
	providertest.StubCUDA(t, stubs, provider, true)
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia")
	wheel := map[string]string{
		"libcublas.so.13": "cublas", "libcublasLt.so.13": "cublas", "libcudart.so.13": "cuda_runtime",
		"libcurand.so.10": "curand", "libcudnn.so.9": "cudnn",
	}
	for lib, pkg := range wheel {
		dir := filepath.Join(site, pkg, "lib")
		mkdirs(t, dir, ".")
		if err := os.Rename(filepath.Join(stubs, lib), filepath.Join(dir, lib)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("LD_LIBRARY_PATH", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CONDA_PREFIX", "")
	t.Setenv("VIRTUAL_ENV", venv)
	h := providers.Host{LibraryProviders: offered, LibraryDir: cudaDir, LibraryVersion: "1.29.0"}

	t.Setenv(nvidia.LibraryPathVar, "")
	err := nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"}, "libcudnn.so.9")
	if err == nil || err.Error() != "libcuda.so.1 not found (NVIDIA driver)" {
		t.Fatalf("CUDA from pip, no driver: %v", err)
	}

	// What would be preloaded, in order: every library after those it
	// needs (libcublas.so.13 needs nothing from the stubs, so the order is
	// the provider library's DT_NEEDED order).
	t.Setenv(nvidia.LibraryPathVar, stubs)
	m := &recorder{}
	h.Probe = m
	if err := nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"}, "libcudnn.so.9"); err != nil {
		t.Fatalf("with a stub driver (recording probe): %v", err)
	}
	var names []string
	for _, f := range m.preloaded {
		names = append(names, filepath.Base(f))
	}
	if want := "libcublasLt.so.13 libcublas.so.13 libcurand.so.10 libcudart.so.13 libcuda.so.1 libcudnn.so.9"; strings.Join(names, " ") != want {
		t.Errorf("preloaded %v, want %s", names, want)
	}

	// The real machine: preloading for real, then the stub driver answers.
	h.Probe = nil
	err = nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"}, "libcudnn.so.9")
	if err == nil || err.Error() != "NVIDIA driver: cuInit: CUDA_ERROR_NO_DEVICE" {
		t.Errorf("with a stub driver: %v, want the preloaded driver's answer", err)
	}
}
