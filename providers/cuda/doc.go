// Package cuda is ONNX Runtime's CUDA execution provider for NVIDIA GPUs. It
// is compiled in only with the build tag cuda (go build -tags cuda
// ./cmd/svc); without the tag the package holds only its metadata
// (known.go), so every build knows the provider by name.
//
// At run time it needs an NVIDIA driver with a device, CUDA 13 and cuDNN 9,
// and libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so
// of the core library's exact version beside libonnxruntime ('make
// lib-cuda': npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9). When it
// cannot run, Usable names each missing library and what it is part of
// (providers/internal/nvidia). Options: providers.device_id picks the GPU, runtime.memory_limit
// caps its arena (gpu_mem_limit).
package cuda
