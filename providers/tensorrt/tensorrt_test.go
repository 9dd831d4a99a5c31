//go:build tensorrt

package tensorrt_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/tensorrt"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, tensorrt.New()) }

const dir = "/opt/ort/lib"

func TestUsable(t *testing.T) {
	offered := []string{"TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"}
	ok := providertest.WithLibraries(dir, "shared", "cuda", "tensorrt")
	ok.Devices = 1
	if err := tensorrt.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: ok}); err != nil {
		t.Fatalf("not usable with everything there: %v", err)
	}
	if len(ok.Loaded) != 0 {
		t.Errorf("loaded %v: the provider libraries must never be loaded outside ONNX Runtime", ok.Loaded)
	}

	// The CUDA libraries alone are not enough.
	cudaOnly := providertest.WithLibraries(dir, "shared", "cuda")
	cudaOnly.Devices = 1
	err := tensorrt.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: cudaOnly})
	if err == nil || !strings.Contains(err.Error(), "libonnxruntime_providers_tensorrt.so is not beside") {
		t.Errorf("without the TensorRT library: %v", err)
	}

	// TensorRT itself missing from the system.
	noTRT := providertest.WithLibraries(dir, "shared", "cuda", "tensorrt")
	noTRT.Devices = 1
	noTRT.Needs["libonnxruntime_providers_tensorrt.so"] = []string{"libnvinfer.so.10", "libnvonnxparser.so.10"}
	err = tensorrt.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: noTRT})
	if err == nil || err.Error() != "libnvinfer.so.10 and libnvonnxparser.so.10 not found (TensorRT 10: install TensorRT 10 for CUDA 13)" {
		t.Errorf("without TensorRT: %v", err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		give providers.Options
		want map[string]string
	}{
		{providers.Options{}, map[string]string{"device_id": "0", "trt_fp16_enable": "0", "trt_int8_enable": "0"}},
		{
			providers.Options{Settings: map[string]any{"tensorrt": &tensorrt.Settings{FP16: true}}},
			map[string]string{"device_id": "0", "trt_fp16_enable": "1", "trt_int8_enable": "0"},
		},
		{
			providers.Options{DeviceID: 2, Settings: map[string]any{
				"tensorrt": &tensorrt.Settings{FP16: true, INT8: true, EngineCache: "/var/cache/svc/trt"},
			}},
			map[string]string{
				"device_id": "2", "trt_fp16_enable": "1", "trt_int8_enable": "1",
				"trt_engine_cache_enable": "1", "trt_engine_cache_path": "/var/cache/svc/trt",
			},
		},
	}
	for _, tt := range tests {
		if got := tensorrt.Options(tt.give); !maps.Equal(got, tt.want) {
			t.Errorf("Options(%+v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// The configuration file's keys reach the provider options as before.
func TestOptionsFromTheConfigurationFile(t *testing.T) {
	tests := []struct {
		body string
		want map[string]string
	}{
		{"name: x\n", map[string]string{"device_id": "0", "trt_fp16_enable": "0", "trt_int8_enable": "0"}},
		{
			"providers:\n  device_id: 1\n  tensorrt:\n    fp16: true\n    int8: true\n    engine_cache: /var/cache/trt\n",
			map[string]string{
				"device_id": "1", "trt_fp16_enable": "1", "trt_int8_enable": "1",
				"trt_engine_cache_enable": "1", "trt_engine_cache_path": "/var/cache/trt",
			},
		},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "svc.yml")
		if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := tensorrt.Options(c.ProviderOptions()); !maps.Equal(got, tt.want) {
			t.Errorf("%q: Options = %v, want %v", tt.body, got, tt.want)
		}
	}
}

// Configure creates the engine cache directory, then appends TensorRT;
// with the npm library (no provider libraries) ONNX Runtime refuses it.
func TestConfigure(t *testing.T) {
	host := providertest.LoadORT(t)
	usable := tensorrt.New().Usable(host)
	so, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	cache := filepath.Join(t.TempDir(), "engines", "classifier")
	err = tensorrt.New().Configure(so, providers.Options{Settings: map[string]any{"tensorrt": &tensorrt.Settings{EngineCache: cache, FP16: true}}})
	if fi, statErr := os.Stat(cache); statErr != nil || !fi.IsDir() {
		t.Errorf("engine cache directory not created: %v", statErr)
	}
	var missing *providers.MissingLibraryError
	switch {
	case usable == nil:
		if err != nil {
			t.Fatalf("TensorRT is usable here but Configure failed: %v", err)
		}
	case errors.As(usable, &missing):
		if err == nil || !strings.Contains(err.Error(), "TensorRT provider") || !strings.Contains(err.Error(), "libonnxruntime_providers_shared") {
			t.Errorf("Configure = %v, want ONNX Runtime's refusal", err)
		}
	default:
		t.Logf("TensorRT not usable (%v); Configure = %v", usable, err)
	}
}
