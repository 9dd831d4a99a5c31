package tensorrt

import "github.com/svc-dev/svc/providers"

// Settings is the providers.tensorrt section of the configuration file.
type Settings struct {
	// FP16 and INT8 let TensorRT build reduced-precision engines. INT8
	// needs a model with quantization data or a calibration table.
	FP16 bool `yaml:"fp16"`
	INT8 bool `yaml:"int8"`
	// EngineCache is a directory where TensorRT keeps built engines between
	// runs, so a restart skips the slow engine build ("" = no cache).
	EngineCache string `yaml:"engine_cache"`
}

// The TensorRT provider's metadata, declared with or without the tensorrt
// tag. A package-level variable, so it is declared before the tagged file's
// init() registers the provider.
var _ = providers.Declare(providers.Known{
	Name:         "tensorrt",
	ORTName:      "TensorrtExecutionProvider",
	Priority:     60,
	Order:        6,
	Needs:        "an NVIDIA GPU, CUDA 13, cuDNN 9, TensorRT 10, and libonnxruntime_providers_{shared,cuda,tensorrt}.so beside libonnxruntime",
	UsesDeviceID: true,
	// An extra session would build the TensorRT engines a second time.
	CostlySessions: true,
	NewSettings:    func() any { return &Settings{} },
	Starter: `fp16: false
int8: false
engine_cache: ""     # directory for built TensorRT engines; empty = off
`,
})
