//go:build directml

package directml

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

func init() { providers.Register("directml", func() providers.Provider { return New() }) }

// Provider is the DirectML execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the DirectML provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "directml" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "DmlExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "DirectX 12 GPU (DirectML)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime DirectML execution provider for DirectX 12 GPUs on Windows"
}

// Priority puts DirectML after the vendor-specific providers.
func (*Provider) Priority() int { return 20 }

// AdapterLister is what a Probe offers when it can list display adapters
// (the real machine does; test fakes may).
type AdapterLister interface {
	DXGIAdapters() ([]sysprobe.Adapter, error)
}

// Usable checks the library offers DirectML, DirectML.dll (beside
// onnxruntime.dll when it is there, else the system's) and Direct3D 12
// load, and there is a hardware adapter: on the software one (the Microsoft
// Basic Render Driver of a machine without a GPU) DirectML would emulate a
// GPU on the CPU, slower than the CPU provider.
func (p *Provider) Usable(h providers.Host) error {
	m := h.Machine()
	dml := "DirectML.dll"
	if h.LibraryDir != "" && m.Exists(filepath.Join(h.LibraryDir, dml)) {
		dml = filepath.Join(h.LibraryDir, dml)
	}
	var load, gpu error
	if err := m.Load("d3d12.dll", dml); err != nil {
		load = fmt.Errorf("DirectX 12 or DirectML not available: %w", err)
	}
	if al, ok := m.(AdapterLister); ok {
		gpu = hardwareAdapter(al)
	}
	return providers.Reasons(h.RequireOffered(p.ORTName()), load, gpu)
}

// hardwareAdapter returns nil when DXGI lists a hardware adapter.
func hardwareAdapter(al AdapterLister) error {
	adapters, err := al.DXGIAdapters()
	if err != nil {
		return fmt.Errorf("cannot list DirectX adapters: %w", err)
	}
	var soft []string
	for _, a := range adapters {
		if !a.Software {
			return nil
		}
		soft = append(soft, a.Name)
	}
	if len(soft) == 0 {
		return errors.New("no DirectX adapter")
	}
	return fmt.Errorf("no DirectX 12 GPU: only the software adapter %s", strings.Join(soft, ", "))
}

// Configure appends DirectML on the configured adapter. DirectML runs one
// operator at a time and cannot use memory patterns, so the session is set
// up that way first, as ONNX Runtime's documentation requires.
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	if err := so.SetMemPattern(false); err != nil {
		return fmt.Errorf("DirectML: disable memory pattern: %w", err)
	}
	if err := so.SetExecutionMode(ort.ExecutionModeSequential); err != nil {
		return fmt.Errorf("DirectML: sequential execution: %w", err)
	}
	if err := so.AppendExecutionProviderDirectML(o.DeviceID); err != nil {
		return fmt.Errorf("append DirectML provider (device %d): %w", o.DeviceID, err)
	}
	return nil
}
