// Package providers defines what an execution provider is and how svc picks
// one. Concrete providers live in sub-packages, each compiled in by a build
// tag of its name (see providers/all), and join the fx value group
// "providers" on their own; nothing outside providers/ names one of them.
package providers

import (
	ort "github.com/yalue/onnxruntime_go"
)

// Provider is one execution provider.
//
// Constructors have no side effects: a provider looks at the machine only
// in Usable, and touches ONNX Runtime only in Configure.
type Provider interface {
	// Name is the --provider value and build tag, e.g. "cuda".
	Name() string
	// ORTName is ONNX Runtime's name, ending in ExecutionProvider, e.g.
	// "CUDAExecutionProvider".
	ORTName() string
	// Platform is a short label for the hardware, e.g. "NVIDIA GPU".
	Platform() string
	// Description says what the provider is.
	Description() string
	// Priority orders automatic selection; higher wins.
	Priority() int
	// Usable returns nil when the provider can run on this host now, or an
	// error saying why not. It may load libraries and look for devices.
	Usable(h Host) error
	// Configure appends the provider to session options.
	Configure(so *ort.SessionOptions, o Options) error
}

// Options are the provider settings from the configuration file. Each
// provider reads the ones that apply to it and ignores the rest.
type Options struct {
	// DeviceID selects the accelerator: the CUDA device for cuda and
	// tensorrt, the AMD GPU for rocm, the DXGI adapter for directml
	// (providers.device_id, default 0).
	DeviceID int
	// MemoryLimit caps the accelerator memory ONNX Runtime's arena may take,
	// in bytes: gpu_mem_limit for cuda (and the CUDA part of tensorrt),
	// migraphx_mem_limit for rocm (runtime.memory_limit; 0 = no cap).
	// openvino, directml and coreml manage device memory themselves.
	MemoryLimit int64
	// TensorRTFP16 and TensorRTINT8 let TensorRT build reduced-precision
	// engines (providers.tensorrt.fp16, providers.tensorrt.int8). INT8 needs
	// a model with quantization data or a calibration table.
	TensorRTFP16 bool
	TensorRTINT8 bool
	// TensorRTEngineCache is a directory where TensorRT keeps built engines
	// between runs, so a restart skips the slow engine build
	// (providers.tensorrt.engine_cache; "" = no cache).
	TensorRTEngineCache string
	// OpenVINODevice is the OpenVINO device type: CPU, GPU, NPU, or a
	// combination such as AUTO:GPU,CPU (providers.openvino.device_type;
	// "" = CPU).
	OpenVINODevice string
}
