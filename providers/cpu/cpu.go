// Package cpu is ONNX Runtime's default CPU execution provider. It is always
// compiled in, and it is what svc falls back to.
package cpu

import (
	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("cpu", func() providers.Provider { return New() }) }

// Provider is the CPU execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the CPU provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "cpu" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "CPUExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "CPU" }

// Description says what the provider is.
func (*Provider) Description() string { return "ONNX Runtime default CPU execution provider" }

// Priority is the lowest: CPU is the last resort.
func (*Provider) Priority() int { return 0 }

// Usable is always nil: every ONNX Runtime build runs on the CPU.
func (*Provider) Usable(providers.Host) error { return nil }

// Configure adds nothing: the CPU provider is ONNX Runtime's default.
func (*Provider) Configure(*ort.SessionOptions, providers.Options) error { return nil }
