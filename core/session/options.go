package session

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/providers"
)

// newSession creates the session on the chosen provider, falling back to
// o.Fallback when that fails.
func newSession(o Options, inputs, outputs []string, log *zap.Logger) (*ort.DynamicAdvancedSession, providers.Provider, error) {
	s, err := sessionOn(o, o.Provider, inputs, outputs)
	if err == nil {
		return s, o.Provider, nil
	}
	if o.Fallback == nil || o.Provider == nil || o.Fallback.Name() == o.Provider.Name() {
		return nil, nil, err
	}
	log.Warn("session creation failed on provider; falling back",
		zap.String("provider", o.Provider.Name()), zap.String("fallback", o.Fallback.Name()), zap.Error(err))
	s, err2 := sessionOn(o, o.Fallback, inputs, outputs)
	if err2 != nil {
		return nil, nil, fmt.Errorf("%w; on %s: %w", err, o.Fallback.Name(), err2)
	}
	return s, o.Fallback, nil
}

func sessionOn(o Options, p providers.Provider, inputs, outputs []string) (*ort.DynamicAdvancedSession, error) {
	so, err := sessionOptions(o.Runtime)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if p != nil {
		if err := p.Configure(so, o.ProviderOptions); err != nil {
			return nil, fmt.Errorf("configure provider %s: %w", p.Name(), err)
		}
	}
	s, err := ort.NewDynamicAdvancedSession(o.File, inputs, outputs, so)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", cleanORTError(err))
	}
	return s, nil
}

func sessionOptions(r config.Runtime) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	fail := func(what string, err error) (*ort.SessionOptions, error) {
		_ = so.Destroy()
		return nil, fmt.Errorf("session options: %s: %w", what, err)
	}
	if r.IntraOpThreads > 0 {
		if err := so.SetIntraOpNumThreads(r.IntraOpThreads); err != nil {
			return fail("intra-op threads", err)
		}
	}
	if r.InterOpThreads > 0 {
		if err := so.SetInterOpNumThreads(r.InterOpThreads); err != nil {
			return fail("inter-op threads", err)
		}
	}
	var level ort.GraphOptimizationLevel = ort.GraphOptimizationLevelEnableAll
	switch r.GraphOptimization {
	case "disabled":
		level = ort.GraphOptimizationLevelDisableAll
	case "basic":
		level = ort.GraphOptimizationLevelEnableBasic
	case "extended":
		level = ort.GraphOptimizationLevelEnableExtended
	}
	if err := so.SetGraphOptimizationLevel(level); err != nil {
		return fail("graph optimization level", err)
	}
	spin := "0"
	if r.Spinning {
		spin = "1"
	}
	for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err := so.AddSessionConfigEntry(key, spin); err != nil {
			return fail("thread spinning", err)
		}
	}
	if r.MemoryLimit > 0 {
		if err := so.AddSessionConfigEntry(onnxrt.UseEnvAllocatorsKey, "1"); err != nil {
			return fail("shared allocator", err)
		}
	}
	if r.OptimizedModelPath != "" {
		if err := so.SetOptimizedModelFilePath(r.OptimizedModelPath); err != nil {
			return fail("optimized model path", err)
		}
	}
	if r.Profile != "" {
		if err := so.EnableProfiling(r.Profile); err != nil {
			return fail("profiling", err)
		}
	}
	return so, nil
}
