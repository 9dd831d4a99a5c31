//go:build cuda

package cuda

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/nvidia"
)

func init() { providers.Register("cuda", func() providers.Provider { return New() }) }

// Provider is the CUDA execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the CUDA provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "cuda" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "CUDAExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "NVIDIA GPU (CUDA)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime CUDA execution provider for NVIDIA GPUs (CUDA 13, cuDNN 9)"
}

// Priority is the one declared in known.go: CUDA comes before every other
// accelerator but one.
func (*Provider) Priority() int { return 50 }

// Usable checks the library offers CUDA, the provider libraries sit beside
// it with its version, everything they need (and cuDNN, which the CUDA
// provider opens at run time) resolves, and the driver sees a device.
func (*Provider) Usable(h providers.Host) error {
	return nvidia.Check(h, "CUDAExecutionProvider", []string{"shared", "cuda"}, "libcudnn.so.9")
}

// Configure appends the CUDA provider with the device and memory cap.
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	opts, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return fmt.Errorf("CUDA provider options: %w", err)
	}
	defer func() { _ = opts.Destroy() }()
	if err := opts.Update(nvidia.CUDAOptions(o)); err != nil {
		return fmt.Errorf("CUDA provider options: %w", err)
	}
	if err := so.AppendExecutionProviderCUDA(opts); err != nil {
		return fmt.Errorf("append CUDA provider: %w", err)
	}
	return nil
}
