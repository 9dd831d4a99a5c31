package providers

import (
	"fmt"
	"strings"
)

// Names lists every --provider value the service accepts, in the order the
// specification gives them. Treat it as read-only.
var Names = []string{"cuda", "coreml", "rocm", "directml", "openvino", "tensorrt", "cpu"}

// Known describes one --provider value, whether or not this binary has it.
type Known struct {
	// Name is the --provider value, and the build tag that compiles it in.
	Name string
	// ORTName is ONNX Runtime's name for it.
	ORTName string
	// GOOS is the only operating system it builds for ("" = any).
	GOOS string
	// Priority orders automatic selection; higher wins.
	Priority int
	// Needs says, for the README and 'svc providers', what it needs at run
	// time besides a build with its tag.
	Needs string
}

// known is the table behind Info, highest priority first. The provider
// packages return the same names and priorities (a test checks it).
var known = []Known{
	{Name: "tensorrt", ORTName: "TensorrtExecutionProvider", Priority: 60,
		Needs: "an NVIDIA GPU, CUDA 12, cuDNN 9, TensorRT 10, and libonnxruntime_providers_{shared,cuda,tensorrt}.so beside libonnxruntime"},
	{Name: "cuda", ORTName: "CUDAExecutionProvider", Priority: 50,
		Needs: "an NVIDIA GPU, CUDA 12, cuDNN 9, and libonnxruntime_providers_{shared,cuda}.so beside libonnxruntime"},
	{Name: "rocm", ORTName: "MIGraphXExecutionProvider", Priority: 40,
		Needs: "an AMD GPU (/dev/kfd), ROCm with MIGraphX, and an ONNX Runtime built with MIGraphX (libonnxruntime_providers_migraphx.so)"},
	{Name: "openvino", ORTName: "OpenVINOExecutionProvider", Priority: 30,
		Needs: "OpenVINO and an ONNX Runtime built with it (libonnxruntime_providers_openvino.so)"},
	{Name: "directml", ORTName: "DmlExecutionProvider", GOOS: "windows", Priority: 20,
		Needs: "Windows with a DirectX 12 GPU, and DirectML.dll beside onnxruntime.dll"},
	{Name: "coreml", ORTName: "CoreMLExecutionProvider", GOOS: "darwin", Priority: 10,
		Needs: "macOS (the official darwin library includes CoreML)"},
	{Name: "cpu", ORTName: "CPUExecutionProvider", Priority: 0,
		Needs: "nothing: every ONNX Runtime library has it"},
}

// KnownProviders returns every provider svc knows, highest priority first.
func KnownProviders() []Known { return append([]Known(nil), known...) }

// Info returns what svc knows about a --provider value.
func Info(name string) (Known, bool) {
	for _, k := range known {
		if k.Name == name {
			return k, true
		}
	}
	return Known{}, false
}

// ValidName reports whether name is one of the specification's provider
// values.
func ValidName(name string) bool {
	_, ok := Info(name)
	return ok
}

// RebuildHint is how to get a binary with the provider compiled in.
func (k Known) RebuildHint() string {
	hint := "go build -tags " + k.Name + " ./cmd/svc"
	switch k.GOOS {
	case "windows":
		hint += " (on Windows, or with GOOS=windows)"
	case "darwin":
		hint += " (on macOS)"
	}
	return hint
}

// NotCompiledError is returned when the asked-for provider is a valid value
// but not compiled into this binary.
type NotCompiledError struct{ Name string }

func (e *NotCompiledError) Error() string {
	k, _ := Info(e.Name)
	k.Name = e.Name
	return fmt.Sprintf("provider %q is not compiled into this binary; rebuild with: %s", e.Name, k.RebuildHint())
}

// UsageError is returned for a --provider value outside the allowed list.
type UsageError struct{ Name string }

func (e *UsageError) Error() string {
	return fmt.Sprintf("invalid --provider %q: allowed values are %s", e.Name, strings.Join(Names, ", "))
}
