//go:build openvino

package openvino

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("openvino", func() providers.Provider { return New() }) }

// Provider is the OpenVINO execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the OpenVINO provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "openvino" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "OpenVINOExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "Intel CPU/GPU/NPU (OpenVINO)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime OpenVINO execution provider for Intel CPUs, GPUs and NPUs"
}

// Priority puts OpenVINO after the discrete-GPU providers.
func (*Provider) Priority() int { return 30 }

// Usable checks the library offers OpenVINO and its provider libraries
// (and so OpenVINO itself) load beside it.
func (p *Provider) Usable(h providers.Host) error {
	return providers.Reasons(
		h.RequireOffered(p.ORTName()),
		h.LoadBeside(providers.ProviderLibrary("shared"), providers.ProviderLibrary("openvino")),
	)
}

// DefaultDevice is the device type when the configuration names none.
const DefaultDevice = "CPU"

// Options maps the configuration to OpenVINO provider options.
func Options(o providers.Options) map[string]string {
	dev := providers.SettingsOf[Settings](o, "openvino").DeviceType
	if dev == "" {
		dev = DefaultDevice
	}
	return map[string]string{"device_type": dev}
}

// Configure appends OpenVINO on the configured device type.
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	if err := so.AppendExecutionProviderOpenVINO(Options(o)); err != nil {
		return fmt.Errorf("append OpenVINO provider (device_type %s): %w", Options(o)["device_type"], err)
	}
	return nil
}
