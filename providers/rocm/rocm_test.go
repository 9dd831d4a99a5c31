//go:build rocm

package rocm_test

import (
	"maps"
	"runtime"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/rocm"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, rocm.New()) }

const dir = "/opt/ort/lib"

func TestUsable(t *testing.T) {
	offered := []string{"MIGraphXExecutionProvider", "CPUExecutionProvider"}
	m := providertest.WithLibraries(dir, "shared", "migraphx")
	m.Files["/dev/kfd"] = true
	if err := rocm.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: m}); err != nil {
		t.Fatalf("not usable with everything there: %v", err)
	}

	// The official CPU/CUDA library on a machine without an AMD GPU: every
	// reason is given.
	bare := providertest.WithLibraries(dir)
	err := rocm.New().Usable(providers.Host{LibraryProviders: []string{"CUDAExecutionProvider", "CPUExecutionProvider"}, LibraryDir: dir, Probe: bare})
	want := []string{"does not offer MIGraphXExecutionProvider", "libonnxruntime_providers_shared.so is not beside"}
	if runtime.GOOS == "linux" {
		want = append(want, "/dev/kfd is missing")
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
}

func TestOptions(t *testing.T) {
	if got, want := rocm.Options(providers.Options{}), map[string]string{"device_id": "0"}; !maps.Equal(got, want) {
		t.Errorf("Options() = %v, want %v", got, want)
	}
	got := rocm.Options(providers.Options{DeviceID: 1, MemoryLimit: 1 << 30})
	if want := map[string]string{"device_id": "1", "migraphx_mem_limit": "1073741824"}; !maps.Equal(got, want) {
		t.Errorf("Options() = %v, want %v", got, want)
	}
}

// ONNX Runtime 1.24 knows MIGraphX by the generic entry point (it has no
// ROCM there any more): the official library says it is not in this build,
// not that the name is unknown.
func TestConfigureUsesAKnownName(t *testing.T) {
	host := providertest.LoadORT(t)
	so, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	err = rocm.New().Configure(so, providers.Options{DeviceID: 0, MemoryLimit: 1 << 30})
	if host.Offers("MIGraphXExecutionProvider") {
		if err != nil {
			t.Fatalf("the library offers MIGraphX but Configure failed: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "MIGraphX execution provider is not supported in this build") {
		t.Errorf("Configure = %v, want ONNX Runtime's 'not supported in this build'", err)
	}
}
