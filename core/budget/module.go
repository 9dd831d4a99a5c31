package budget

import (
	"go.uber.org/fx"

	"github.com/svc-dev/svc/core/config"
)

// Module provides the server's *Memory from limits.request_memory and
// limits.memory_wait; every protocol that serves inferences asks for it.
var Module = fx.Module("budget", fx.Provide(func(l config.Limits) *Memory {
	return New(int64(l.RequestMemory), l.MemoryWait.Std())
}))
