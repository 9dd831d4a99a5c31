package rocm

import "github.com/svc-dev/svc/providers"

// The ROCm provider's metadata, declared with or without the rocm tag. A
// package-level variable, so it is declared before the tagged file's init()
// registers the provider.
var _ = providers.Declare(providers.Known{
	Name:         "rocm",
	ORTName:      "MIGraphXExecutionProvider",
	Priority:     40,
	Order:        3,
	Needs:        "an AMD GPU (/dev/kfd), ROCm with MIGraphX, and an ONNX Runtime built with MIGraphX (libonnxruntime_providers_migraphx.so)",
	UsesDeviceID: true,
})
