//go:build coreml

package coreml

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
)

func init() { providers.Register("coreml", func() providers.Provider { return New() }) }

// Provider is the CoreML execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the CoreML provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "coreml" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "CoreMLExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "Apple Neural Engine/GPU (CoreML)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime CoreML execution provider for Apple silicon"
}

// Priority puts CoreML after every other accelerator (it only exists on
// macOS, where it is the only one).
func (*Provider) Priority() int { return 10 }

// Usable checks the library offers CoreML.
func (p *Provider) Usable(h providers.Host) error { return h.RequireOffered(p.ORTName()) }

// Options are the CoreML provider options: every compute unit.
func Options(providers.Options) map[string]string {
	return map[string]string{"MLComputeUnits": "ALL"}
}

// Configure appends CoreML.
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	if err := so.AppendExecutionProviderCoreMLV2(Options(o)); err != nil {
		return fmt.Errorf("append CoreML provider: %w", err)
	}
	return nil
}
