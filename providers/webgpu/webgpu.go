//go:build webgpu

package webgpu

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("webgpu", func() providers.Provider { return New() }) }

// Provider is the WebGPU execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the WebGPU provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "webgpu" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "WebGpuExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "GPU (WebGPU: Vulkan, D3D12, Metal)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime WebGPU execution provider (Dawn) for any GPU with Vulkan, D3D12 or Metal"
}

// Priority is the one declared in known.go: the last accelerator before
// the CPU.
func (*Provider) Priority() int { return 5 }

// appendName is the name AppendExecutionProvider knows the provider by.
const appendName = "WebGPU"

// Usable checks the library offers WebGPU and that an adapter is there:
// appending the provider to session options requests it, so the probe
// appends to throw-away options.
func (p *Provider) Usable(h providers.Host) error {
	if err := h.RequireOffered(p.ORTName()); err != nil {
		return err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return fmt.Errorf("session options: %w", err)
	}
	defer func() { _ = so.Destroy() }()
	if err := so.AppendExecutionProvider(appendName, map[string]string{}); err != nil {
		return AdapterError(err)
	}
	return nil
}

// Configure appends the WebGPU provider.
func (*Provider) Configure(so *ort.SessionOptions, _ providers.Options) error {
	if err := so.AppendExecutionProvider(appendName, map[string]string{}); err != nil {
		return fmt.Errorf("append WebGPU provider: %w", AdapterError(err))
	}
	return nil
}

// adapterMessage starts ONNX Runtime's message when Dawn finds no adapter.
const adapterMessage = "Failed to get a WebGPU adapter"

// AdapterError shortens ONNX Runtime's error for a missing adapter to its
// message, without the source location and check expression, plus a hint
// on what to install; other errors pass through.
func AdapterError(err error) error {
	msg := err.Error()
	i := strings.Index(msg, adapterMessage)
	if i < 0 {
		return err
	}
	return errors.New(strings.TrimSpace(msg[i:]) + " (" + driverHint(runtime.GOOS) + ")")
}

// driverHint says what gives WebGPU an adapter on goos.
func driverHint(goos string) string {
	switch goos {
	case "windows":
		return "no D3D12 adapter: update the GPU driver"
	case "darwin":
		return "no Metal device"
	}
	return "no usable Vulkan driver: install one, e.g. mesa-vulkan-drivers 25 or newer, or point VK_ICD_FILENAMES at one"
}
