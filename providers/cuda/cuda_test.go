//go:build cuda

package cuda_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/cuda"
	"github.com/svc-dev/svc/providers/internal/nvidia"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, cuda.New()) }

const dir = "/opt/ort/lib"

func TestUsable(t *testing.T) {
	offered := []string{"CUDAExecutionProvider", "CPUExecutionProvider"}
	tests := []struct {
		name    string
		offers  []string
		machine func() *providertest.Machine
		version string   // the core library's version ("" = unknown: no check)
		want    []string // substrings of the error; none = usable
		// wantExact: want[0] is the whole error
		wantExact bool
	}{
		{
			name: "everything there", offers: offered,
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Devices = 1
				return m
			},
		},
		{
			name: "library without CUDA", offers: []string{"CPUExecutionProvider"},
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Devices = 1
				return m
			},
			want: []string{"does not offer CUDAExecutionProvider"},
		},
		{
			name: "provider libraries missing (the npm package)", offers: offered,
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir)
				m.Devices = 1
				return m
			},
			want: []string{"libonnxruntime_providers_shared.so is not beside the ONNX Runtime library in /opt/ort/lib", "make lib-cuda"},
		},
		{
			name: "cuDNN missing", offers: offered,
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Absent["libcudnn.so.9"] = true
				m.Devices = 1
				return m
			},
			want:      []string{"libcudnn.so.9 not found (cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13)"},
			wantExact: true,
		},
		{
			name: "no CUDA runtime", offers: offered,
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Needs["libonnxruntime_providers_cuda.so"] = []string{"libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13", "libcuda.so.1"}
				m.Absent["libcudnn.so.9"] = true
				m.DriverErr = errors.New("no NVIDIA driver: libcuda.so.1: cannot open shared object file")
				return m
			},
			want: []string{"libcublasLt.so.13 and libcublas.so.13 not found (CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas); " +
				"libcurand.so.10 not found (CUDA 13 cuRAND: install CUDA 13 or pip install nvidia-curand); " +
				"libcudart.so.13 not found (CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime); " +
				"libcuda.so.1 not found (NVIDIA driver); " +
				"libcudnn.so.9 not found (cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13)"},
			wantExact: true,
		},
		{
			name: "provider libraries of another ONNX Runtime version", offers: offered, version: "1.29.0",
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Embedded["libonnxruntime_providers_cuda.so"] = []string{"1.3.9", "1.24.1"}
				m.Devices = 1
				return m
			},
			want: []string{"libonnxruntime_providers_cuda.so is not ONNX Runtime 1.29.0 (it has version 1.24.1): provider libraries must be the core library's exact version; refusing to load it"},
		},
		{
			name: "provider libraries of the core's version", offers: offered, version: "1.29.0",
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir, "shared", "cuda")
				m.Embedded["libonnxruntime_providers_cuda.so"] = []string{"1.3.9", "1.29.0"}
				m.Devices = 1
				return m
			},
		},
		{
			name: "no driver, no libraries", offers: offered,
			machine: func() *providertest.Machine {
				m := providertest.WithLibraries(dir)
				m.DriverErr = errors.New("no NVIDIA driver: libcuda.so.1: cannot open shared object file")
				return m
			},
			want: []string{"is not beside", "; no NVIDIA driver: libcuda.so.1"},
		},
		{
			name: "driver without devices", offers: offered,
			machine: func() *providertest.Machine { return providertest.WithLibraries(dir, "shared", "cuda") },
			want:    []string{"the NVIDIA driver sees no CUDA device"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.machine()
			err := cuda.New().Usable(providers.Host{LibraryProviders: tt.offers, LibraryDir: dir, LibraryVersion: tt.version, Probe: m})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("not usable: %v", err)
				}
				if len(m.Loaded) != 0 {
					t.Errorf("loaded %v: the provider libraries must never be loaded outside ONNX Runtime", m.Loaded)
				}
				return
			}
			if err == nil {
				t.Fatal("usable, want an error")
			}
			if tt.wantExact && err.Error() != tt.want[0] {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want[0])
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		give providers.Options
		want map[string]string
	}{
		{providers.Options{}, map[string]string{"device_id": "0"}},
		{providers.Options{DeviceID: 1, MemoryLimit: 2 << 30}, map[string]string{"device_id": "1", "gpu_mem_limit": "2147483648"}},
	}
	for _, tt := range tests {
		if got := nvidia.CUDAOptions(tt.give); !maps.Equal(got, tt.want) {
			t.Errorf("CUDAOptions(%+v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// Configure against the real library: with the npm package (no provider
// libraries) ONNX Runtime refuses CUDA and Configure says why; where CUDA is
// usable, a session runs on it.
func TestConfigure(t *testing.T) {
	host := providertest.LoadORT(t)
	usable := cuda.New().Usable(host)
	so, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	err = cuda.New().Configure(so, providers.Options{})
	var missing *providers.MissingLibraryError
	switch {
	case usable == nil:
		if err != nil {
			t.Fatalf("CUDA is usable here but Configure failed: %v", err)
		}
		s, err := ort.NewDynamicAdvancedSession(providertest.Model(t, "classifier.onnx"), []string{"input"}, []string{"label"}, so)
		if err != nil {
			t.Fatalf("session on CUDA: %v", err)
		}
		_ = s.Destroy()
	case errors.As(usable, &missing):
		if err == nil || !strings.Contains(err.Error(), "CUDA provider") || !strings.Contains(err.Error(), "libonnxruntime_providers_shared") {
			t.Errorf("Configure = %v, want ONNX Runtime's reason", err)
		}
	default:
		t.Logf("CUDA not usable (%v); Configure = %v", usable, err)
	}
}
