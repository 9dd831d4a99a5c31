package cuda

import "github.com/svc-dev/svc/providers"

// The CUDA provider's metadata, declared with or without the cuda tag. A
// package-level variable, so it is declared before the tagged file's init()
// registers the provider.
var _ = providers.Declare(providers.Known{
	Name:         "cuda",
	ORTName:      "CUDAExecutionProvider",
	Priority:     50,
	Order:        1,
	Needs:        "an NVIDIA GPU, CUDA 13, cuDNN 9, and libonnxruntime_providers_{shared,cuda}.so beside libonnxruntime",
	UsesDeviceID: true,
})
