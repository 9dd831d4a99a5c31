// Package providers defines what an execution provider is and how svc picks
// one. Concrete providers live in sub-packages, each compiled in by a build
// tag of its name, and join the fx value group "providers" on their own.
package providers

import (
	ort "github.com/yalue/onnxruntime_go"
)

// Names lists every --provider value the service accepts, in the order of
// automatic preference.
var Names = []string{"tensorrt", "cuda", "rocm", "openvino", "directml", "coreml", "cpu"}

// Options are the provider settings from the configuration file.
type Options struct {
	// DeviceID selects the accelerator (cuda, tensorrt, rocm, directml).
	DeviceID int
	// MemoryLimit caps accelerator memory in bytes (0 = no cap).
	MemoryLimit int64
	// TensorRTFP16 and TensorRTINT8 enable reduced precision in TensorRT.
	TensorRTFP16 bool
	TensorRTINT8 bool
	// TensorRTEngineCache is a directory for built engines ("" = off).
	TensorRTEngineCache string
	// OpenVINODevice is the OpenVINO device type, e.g. CPU, GPU, NPU, AUTO.
	OpenVINODevice string
}

// Host is what a provider may ask about the machine it runs on.
type Host struct {
	// LibraryProviders is ONNX Runtime's GetAvailableProviders on the loaded
	// library (names ending in ExecutionProvider).
	LibraryProviders []string
}

// Offers reports whether the loaded library offers the named provider.
func (h Host) Offers(ortName string) bool {
	for _, n := range h.LibraryProviders {
		if n == ortName {
			return true
		}
	}
	return false
}

// Provider is one execution provider.
type Provider interface {
	// Name is the --provider value, e.g. "cuda".
	Name() string
	// ORTName is ONNX Runtime's name, e.g. "CUDAExecutionProvider".
	ORTName() string
	// Platform is a short label for the hardware, e.g. "NVIDIA GPU".
	Platform() string
	// Description says what the provider is.
	Description() string
	// Priority orders automatic selection; higher wins.
	Priority() int
	// Usable returns nil when the provider can run on this host now, or an
	// error saying why not.
	Usable(h Host) error
	// Configure appends the provider to session options.
	Configure(so *ort.SessionOptions, o Options) error
}
