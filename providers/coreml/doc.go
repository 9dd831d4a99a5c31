// Package coreml is ONNX Runtime's CoreML execution provider for Apple
// silicon (Neural Engine, GPU and CPU). It is compiled in only on macOS with
// the build tag coreml (go build -tags coreml ./cmd/svc); elsewhere the
// package holds only its metadata (known.go), so every build knows the
// provider by name.
//
// At run time it needs macOS and a library built with CoreML: the official
// darwin/arm64 library from onnxruntime-node 1.29.0 is. CoreML picks the
// compute units itself (MLComputeUnits ALL) and manages memory itself;
// providers.device_id and runtime.memory_limit do not apply.
package coreml
