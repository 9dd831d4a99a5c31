// Package openvino is ONNX Runtime's OpenVINO execution provider for Intel
// CPUs, integrated and discrete GPUs and NPUs. It is compiled in only with
// the build tag openvino (go build -tags openvino ./cmd/svc); without the
// tag the package holds only its metadata and settings (known.go), so every
// build knows the provider by name.
//
// At run time it needs OpenVINO and an ONNX Runtime 1.24 built with it
// (libonnxruntime_providers_shared.so and libonnxruntime_providers_openvino.so
// beside libonnxruntime, as in Intel's onnxruntime-openvino packages; on
// Windows the matching .dll files beside onnxruntime.dll).
//
// Options: providers.openvino.device_type (CPU, GPU, NPU, or a combination
// such as AUTO:GPU,CPU; default CPU).
package openvino
