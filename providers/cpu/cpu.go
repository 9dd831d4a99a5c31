// Package cpu is ONNX Runtime's default CPU execution provider. It is always
// compiled in.
package cpu

import (
	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("cpu", New) }

// Provider is the CPU execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the CPU provider.
func New() *Provider { return &Provider{} }

func (*Provider) Name() string        { return "cpu" }
func (*Provider) ORTName() string     { return "CPUExecutionProvider" }
func (*Provider) Platform() string    { return "CPU" }
func (*Provider) Description() string { return "ONNX Runtime default CPU execution provider" }
func (*Provider) Priority() int       { return 0 }

// Usable is always nil: every ONNX Runtime build runs on the CPU.
func (*Provider) Usable(providers.Host) error { return nil }

// Configure adds nothing: the CPU provider is ONNX Runtime's default.
func (*Provider) Configure(*ort.SessionOptions, providers.Options) error { return nil }
