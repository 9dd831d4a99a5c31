package webgpu

import "github.com/svc-dev/svc/providers"

// The WebGPU provider's metadata, declared with or without the webgpu tag.
// A package-level variable, so it is declared before the tagged file's
// init() registers the provider.
//
// Priority 5: below every other accelerator, above the CPU. The discrete-GPU
// providers (tensorrt, cuda, rocm) run vendor kernels; openvino, directml and
// coreml are each their platform's native path, with wider operator coverage
// and tuned kernels on the hardware they serve. WebGPU is the portable path
// for a GPU none of those can drive (a Vulkan-only Linux box, an AMD or
// Intel GPU without ROCm or OpenVINO), so it is the last accelerator tried.
// It is also Explicit: automatic selection never picks it, because its
// adapter request succeeds on a software Vulkan driver (SwiftShader,
// llvmpipe), where it runs hundreds of times slower than the CPU provider.
var _ = providers.Declare(providers.Known{
	Name:     "webgpu",
	ORTName:  "WebGpuExecutionProvider",
	Priority: 5,
	Order:    7,
	Explicit: true,
	Needs:    "a GPU with a Vulkan driver (Linux), D3D12 (Windows) or Metal (macOS); ONNX Runtime's official builds include the provider",
})
