package openvino

import "github.com/svc-dev/svc/providers"

// Settings is the providers.openvino section of the configuration file.
type Settings struct {
	// DeviceType is the OpenVINO device type: CPU, GPU, NPU, or a
	// combination such as AUTO:GPU,CPU ("" = CPU).
	DeviceType string `yaml:"device_type"`
}

// The OpenVINO provider's metadata, declared with or without the openvino
// tag. A package-level variable, so it is declared before the tagged file's
// init() registers the provider.
var _ = providers.Declare(providers.Known{
	Name:        "openvino",
	ORTName:     "OpenVINOExecutionProvider",
	Priority:    30,
	Order:       5,
	Needs:       "OpenVINO and an ONNX Runtime built with it (libonnxruntime_providers_openvino.so)",
	NewSettings: func() any { return &Settings{} },
	Starter: `device_type: ""      # CPU, GPU, NPU or AUTO; empty = OpenVINO's default
`,
})
