//go:build tensorrt

package tensorrt

import (
	"fmt"
	"os"
	"strconv"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/nvidia"
)

func init() { providers.Register("tensorrt", func() providers.Provider { return New() }) }

// Provider is the TensorRT execution provider.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// New returns the TensorRT provider.
func New() *Provider { return &Provider{} }

// Name is the --provider value.
func (*Provider) Name() string { return "tensorrt" }

// ORTName is ONNX Runtime's name for the provider.
func (*Provider) ORTName() string { return "TensorrtExecutionProvider" }

// Platform labels the hardware.
func (*Provider) Platform() string { return "NVIDIA GPU (TensorRT)" }

// Description says what the provider is.
func (*Provider) Description() string {
	return "ONNX Runtime TensorRT execution provider for NVIDIA GPUs (TensorRT 10, with CUDA for the rest of the graph)"
}

// Priority is the highest: TensorRT is the fastest where it can run.
func (*Provider) Priority() int { return 60 }

// Usable checks the library offers TensorRT, the provider libraries
// (TensorRT and the CUDA one behind it) load, and the driver sees a device.
func (*Provider) Usable(h providers.Host) error {
	return nvidia.Check(h, "TensorrtExecutionProvider", []string{"shared", "cuda", "tensorrt"})
}

// settings is the providers.tensorrt section in o.
func settings(o providers.Options) *Settings { return providers.SettingsOf[Settings](o, "tensorrt") }

// Options maps the configuration to TensorRT provider options.
func Options(o providers.Options) map[string]string {
	s := settings(o)
	m := map[string]string{
		"device_id":       strconv.Itoa(o.DeviceID),
		"trt_fp16_enable": boolOpt(s.FP16),
		"trt_int8_enable": boolOpt(s.INT8),
	}
	if s.EngineCache != "" {
		m["trt_engine_cache_enable"] = "1"
		m["trt_engine_cache_path"] = s.EngineCache
	}
	return m
}

func boolOpt(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Configure appends TensorRT, then CUDA for the nodes TensorRT leaves.
func (*Provider) Configure(so *ort.SessionOptions, o providers.Options) error {
	if dir := settings(o).EngineCache; dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("TensorRT engine cache: %w", err)
		}
	}
	trt, err := ort.NewTensorRTProviderOptions()
	if err != nil {
		return fmt.Errorf("TensorRT provider options: %w", err)
	}
	defer func() { _ = trt.Destroy() }()
	if err := trt.Update(Options(o)); err != nil {
		return fmt.Errorf("TensorRT provider options: %w", err)
	}
	if err := so.AppendExecutionProviderTensorRT(trt); err != nil {
		return fmt.Errorf("append TensorRT provider: %w", err)
	}
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return fmt.Errorf("CUDA provider options: %w", err)
	}
	defer func() { _ = cuda.Destroy() }()
	if err := cuda.Update(nvidia.CUDAOptions(o)); err != nil {
		return fmt.Errorf("CUDA provider options: %w", err)
	}
	if err := so.AppendExecutionProviderCUDA(cuda); err != nil {
		return fmt.Errorf("append CUDA provider after TensorRT: %w", err)
	}
	return nil
}
