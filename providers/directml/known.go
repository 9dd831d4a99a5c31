package directml

import "github.com/svc-dev/svc/providers"

// The DirectML provider's metadata, declared on every OS, with or without
// the directml tag. A package-level variable, so it is declared before the
// tagged file's init() registers the provider.
var _ = providers.Declare(providers.Known{
	Name:         "directml",
	ORTName:      "DmlExecutionProvider",
	GOOS:         "windows",
	Priority:     20,
	Order:        4,
	Needs:        "Windows with a DirectX 12 GPU, and DirectML.dll beside onnxruntime.dll",
	UsesDeviceID: true,
})
