// Package rocm runs models on AMD GPUs through ROCm. It is compiled in only
// with the build tag rocm (go build -tags rocm ./cmd/svc); without the tag
// the package holds only its metadata (known.go), so every build knows the
// provider by name.
//
// ONNX Runtime removed its ROCm execution provider in 1.23; on AMD GPUs it
// now runs through MIGraphXExecutionProvider, AMD's graph compiler on top of
// ROCm, so that is what --provider rocm appends. It needs an AMD GPU
// (/dev/kfd), ROCm with MIGraphX, and an ONNX Runtime 1.24 built with
// MIGraphX (libonnxruntime_providers_shared.so and
// libonnxruntime_providers_migraphx.so beside libonnxruntime; AMD publishes
// such builds, the official npm and NuGet CPU/CUDA packages are not).
//
// Options: providers.device_id picks the GPU, runtime.memory_limit sets
// migraphx_mem_limit.
package rocm
