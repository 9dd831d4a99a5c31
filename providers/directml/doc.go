// Package directml is ONNX Runtime's DirectML execution provider for any
// DirectX 12 GPU on Windows. It is compiled in only on Windows with the
// build tag directml (go build -tags directml ./cmd/svc, or GOOS=windows
// with a mingw-w64 C compiler); elsewhere the package holds only its
// metadata (known.go), so every build knows the provider by name.
//
// At run time it needs a DirectX 12 capable GPU and DirectML.dll beside
// onnxruntime.dll: the official win32/x64 library from onnxruntime-node
// 1.29.0 is built with DirectML and ships DirectML.dll, and svc's windows
// release archive holds both in lib\.
//
// Options: providers.device_id picks the DXGI adapter. DirectML manages
// device memory itself, so runtime.memory_limit does not apply to it.
package directml
