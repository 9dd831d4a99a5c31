// Package webgpu is ONNX Runtime's WebGPU execution provider (Dawn): Vulkan
// on Linux, D3D12 on Windows, Metal on macOS. It is compiled in only with
// the build tag webgpu (go build -tags webgpu ./cmd/svc); without the tag
// the package holds only its metadata (known.go), so every build knows the
// provider by name.
//
// The official ONNX Runtime builds (onnxruntime-node 1.29.0, which svc
// bundles) include it; no provider library is needed. At run time it needs
// a WebGPU adapter: on Linux a Vulkan driver (a GPU's, or a software one
// such as SwiftShader or Mesa 25's lavapipe; Mesa 22's lavapipe lacks
// features Dawn requires). Appending the provider requests the adapter, so
// the usability probe is that append. It is used only when asked for
// (--provider webgpu): automatic selection never picks it.
package webgpu
