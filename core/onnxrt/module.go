package onnxrt

import (
	"context"

	"go.uber.org/fx"
)

// LibrarySetting is the runtime.library value from the configuration file.
type LibrarySetting string

// Verbose turns on ONNX Runtime's warnings.
type Verbose bool

// MemoryLimit caps the CPU arena in bytes (0 = none).
type MemoryLimit int64

// Module loads the ONNX Runtime environment and destroys it on stop.
var Module = fx.Module("onnxrt", fx.Provide(newEnv))

func newEnv(lc fx.Lifecycle, lib LibrarySetting, verbose Verbose, limit MemoryLimit) (*Env, error) {
	env, err := Load(DefaultSearch(string(lib)), bool(verbose))
	if err != nil {
		return nil, err
	}
	if err := env.LimitCPUMemory(int64(limit)); err != nil {
		_ = env.Close()
		return nil, err
	}
	lc.Append(fx.StopHook(func(context.Context) error { return env.Close() }))
	return env, nil
}
