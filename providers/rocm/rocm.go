//go:build rocm

package rocm

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("rocm", func() providers.Provider { return New() }) }

// Provider runs on AMD GPUs through MIGraphX.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the ROCm provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "rocm" }

// ORTName is ONNX Runtime's name for the provider that runs on ROCm.
func (*Provider) ORTName() string { return "MIGraphXExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "AMD GPU (ROCm)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "AMD GPUs through ROCm: ONNX Runtime's MIGraphX execution provider (its ROCm execution provider was removed in 1.23)"
}

// Priority puts ROCm after the NVIDIA providers.
func (*Provider) Priority() int { return 40 }

// kfd is the ROCm kernel driver's device node.
const kfd = "/dev/kfd"

// Usable checks the library offers MIGraphX, its provider libraries load
// beside it, and (on Linux) the ROCm kernel driver is there.
func (p *Provider) Usable(h providers.Host) error {
	var errs []error
	errs = append(errs, h.RequireOffered(p.ORTName()))
	errs = append(errs, h.LoadBeside(providers.ProviderLibrary("shared"), providers.ProviderLibrary("migraphx")))
	if runtime.GOOS == "linux" && !h.Machine().Exists(kfd) {
		errs = append(errs, errors.New("no AMD GPU: "+kfd+" is missing (is the amdgpu driver with ROCm loaded?)"))
	}
	return providers.Reasons(errs...)
}

// Options maps the configuration to MIGraphX provider options.
func Options(o providers.Options) map[string]string {
	m := map[string]string{"device_id": strconv.Itoa(o.DeviceID)}
	if o.MemoryLimit > 0 {
		m["migraphx_mem_limit"] = strconv.FormatInt(o.MemoryLimit, 10)
	}
	return m
}

// Configure appends MIGraphX through the generic C API entry point (the Go
// binding has no MIGraphX-specific one).
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	if err := so.AppendExecutionProvider("MIGraphX", Options(o)); err != nil {
		return fmt.Errorf("append MIGraphX provider: %w", err)
	}
	return nil
}
