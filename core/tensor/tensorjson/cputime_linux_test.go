package tensorjson

import (
	"syscall"
	"time"
)

// threadCPUTime is the CPU time used by the calling OS thread. Benchmarks
// report throughput by it too (cpu-MB/s): on a busy machine, wall-clock time
// includes time the thread spent waiting for a core.
func threadCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
