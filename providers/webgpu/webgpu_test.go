//go:build webgpu

package webgpu_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/webgpu"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, webgpu.New()) }

// ONNX Runtime's adapter error is cut down to its message plus a hint;
// other errors pass through unchanged.
func TestAdapterError(t *testing.T) {
	hint := map[string]string{
		"linux":   "no usable Vulkan driver: install one, e.g. mesa-vulkan-drivers 25 or newer, or point VK_ICD_FILENAMES at one",
		"windows": "no D3D12 adapter: update the GPU driver",
		"darwin":  "no Metal device",
	}[runtime.GOOS]
	tests := []struct {
		give string
		want string
	}{
		{
			give: "/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:100 onnxruntime::webgpu::WebGpuContext::Initialize(...)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters",
			want: "Failed to get a WebGPU adapter: No supported adapters (" + hint + ")",
		},
		{give: "WebGPU execution provider is not supported in this build.", want: "WebGPU execution provider is not supported in this build."},
	}
	for _, tt := range tests {
		if got := webgpu.AdapterError(errors.New(tt.give)).Error(); got != tt.want {
			t.Errorf("AdapterError(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// A library without the WebGPU provider is refused before any adapter is
// requested.
func TestUsableNeedsTheProviderInTheLibrary(t *testing.T) {
	err := webgpu.New().Usable(providers.Host{LibraryProviders: []string{"CPUExecutionProvider"}})
	if err == nil || err.Error() != "the ONNX Runtime library does not offer WebGpuExecutionProvider" {
		t.Errorf("Usable = %v", err)
	}
}
