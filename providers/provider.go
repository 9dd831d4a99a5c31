// Package providers defines what an execution provider is and how svc picks
// one. Concrete providers live in sub-packages: each declares its metadata
// (Declare) from an untagged file, is compiled in by a build tag of its name
// (Register, from the tagged files), and joins the fx value group
// "providers" on its own. providers/all imports them all; nothing outside
// providers/ names one of them.
package providers

import (
	ort "github.com/yalue/onnxruntime_go"
)

// Provider is one execution provider.
//
// Constructors have no side effects: a provider looks at the machine only
// in Usable, and touches ONNX Runtime only in Configure.
type Provider interface {
	// Name is the --provider value and build tag, e.g. "cuda".
	Name() string
	// ORTName is ONNX Runtime's name, ending in ExecutionProvider, e.g.
	// "CUDAExecutionProvider".
	ORTName() string
	// Platform is a short label for the hardware, e.g. "NVIDIA GPU".
	Platform() string
	// Description says what the provider is.
	Description() string
	// Priority orders automatic selection; higher wins.
	Priority() int
	// Usable returns nil when the provider can run on this host now, or an
	// error saying why not. It may load libraries and look for devices.
	Usable(h Host) error
	// Configure appends the provider to session options.
	Configure(so *ort.SessionOptions, o Options) error
}

// Options are the provider settings from the configuration file. Each
// provider reads the ones that apply to it and ignores the rest.
type Options struct {
	// DeviceID selects the accelerator for the providers whose Known has
	// UsesDeviceID, e.g. the CUDA device or the DXGI adapter
	// (providers.device_id, default 0).
	DeviceID int
	// MemoryLimit caps the accelerator memory ONNX Runtime's arena may take,
	// in bytes, for the providers that can cap it (runtime.memory_limit;
	// 0 = no cap). The others manage device memory themselves.
	MemoryLimit int64
	// Settings holds the providers' own settings sections
	// (providers.<name>), by provider name: each a pointer of the type the
	// provider's Known.NewSettings returns. A provider reads its own with
	// SettingsOf; a missing entry means the declared defaults. Read-only.
	Settings map[string]any
}

// SettingsOf returns provider name's settings section from o as the *T its
// Known.NewSettings declared: the configuration's when o holds one, else
// the declared defaults, else (no section of type T declared) a zero T.
func SettingsOf[T any](o Options, name string) *T {
	if s, ok := o.Settings[name].(*T); ok && s != nil {
		return s
	}
	if k, ok := Info(name); ok && k.NewSettings != nil {
		if s, ok := k.NewSettings().(*T); ok {
			return s
		}
	}
	return new(T)
}
