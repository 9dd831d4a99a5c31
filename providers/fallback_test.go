package providers_test

import (
	"fmt"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/cpu"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

// realCUDA is a provider that really appends ONNX Runtime's CUDA provider,
// as providers/cuda does; ONNX Runtime refuses it on a machine without the
// CUDA provider libraries, and refuses device 9999 on any machine.
type realCUDA struct{ fake }

func (*realCUDA) Configure(so *ort.SessionOptions, o providers.Options) error {
	opts, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer func() { _ = opts.Destroy() }()
	if err := opts.Update(map[string]string{"device_id": fmt.Sprint(o.DeviceID)}); err != nil {
		return err
	}
	return so.AppendExecutionProviderCUDA(opts)
}

// A provider whose session cannot be created falls back to CPU, and the
// reason is logged once.
func TestSessionFailureFallsBackToCPU(t *testing.T) {
	providertest.LoadORT(t)
	model := providertest.Model(t, "classifier.onnx")
	gpu := &realCUDA{fake: *fakeOf(t, "cuda", nil)}
	obs, logs := observer.New(zapcore.InfoLevel)
	pred, err := session.New(session.Options{
		Name: "classifier", File: model,
		Runtime:  config.Default().Runtime,
		Provider: gpu, Fallback: cpu.New(),
		// No machine has a CUDA device 9999: the CUDA provider fails here
		// whether or not this machine has CUDA.
		ProviderOptions: providers.Options{DeviceID: 9999},
	}, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer pred.Close()
	if got := pred.Provider().Name(); got != "cpu" {
		t.Fatalf("runs on %s, want the CPU fallback", got)
	}
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 1 {
		t.Fatalf("want one warning, got %v", logs.All())
	}
	ctx := warns[0].ContextMap()
	if ctx["provider"] != "cuda" || ctx["fallback"] != "cpu" || fmt.Sprint(ctx["error"]) == "" {
		t.Errorf("warning = %s %v, want the provider, the fallback and ONNX Runtime's reason", warns[0].Message, ctx)
	}
	c := providers.Choice{Provider: gpu}
	if n := c.Note(pred.Provider()); n != "fallback: cuda failed to start a session" {
		t.Errorf("banner note = %q", n)
	}
}
