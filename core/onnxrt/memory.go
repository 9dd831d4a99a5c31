package onnxrt

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// UseEnvAllocatorsKey is the session option that makes a session allocate
// from the environment's shared allocator (the capped arena).
const UseEnvAllocatorsKey = "session.use_env_allocators"

// LimitCPUMemory registers a shared CPU arena capped at limit bytes. Sessions
// that set UseEnvAllocatorsKey allocate weights and activations from it, so
// an allocation past the cap fails instead of growing the process.
func (e *Env) LimitCPUMemory(limit int64) error {
	if limit <= 0 {
		return nil
	}
	// Extend by the requested size (strategy 1) so the cap is not
	// overshot by power-of-two growth.
	cfg, err := ort.NewArenaCfg(int(limit), 1, -1, -1)
	if err != nil {
		return fmt.Errorf("arena config: %w", err)
	}
	defer cfg.Destroy()
	mi, err := ort.GetMemoryInfo()
	if err != nil {
		return fmt.Errorf("memory info: %w", err)
	}
	if err := ort.CreateAndRegisterAllocator(mi, cfg); err != nil {
		return fmt.Errorf("register capped CPU arena: %w", err)
	}
	e.memoryLimit = limit
	return nil
}

// MemoryLimit is the CPU arena cap in bytes (0 = none).
func (e *Env) MemoryLimit() int64 { return e.memoryLimit }
