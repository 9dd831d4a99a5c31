// Package tensorrt is ONNX Runtime's TensorRT execution provider for NVIDIA
// GPUs, with the CUDA provider behind it for the nodes TensorRT does not
// take. It is compiled in only with the build tag tensorrt (go build -tags
// tensorrt ./cmd/svc); without the tag the package holds only its metadata
// and settings (known.go), so every build knows the provider by name.
//
// At run time it needs what cuda needs (an NVIDIA driver with a device,
// CUDA 13, cuDNN 9, libonnxruntime_providers_shared.so and
// libonnxruntime_providers_cuda.so) plus TensorRT 10 and
// libonnxruntime_providers_tensorrt.so beside libonnxruntime, of the core
// library's exact version ('make lib-cuda': npm
// com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9).
//
// Options: providers.device_id, runtime.memory_limit (the CUDA arena's
// gpu_mem_limit), providers.tensorrt.fp16 and .int8 (reduced-precision
// engines), providers.tensorrt.engine_cache (a directory that keeps built
// engines across restarts; created when missing).
package tensorrt
