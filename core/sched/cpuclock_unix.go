//go:build linux || darwin || freebsd

package sched

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time the whole process has used so far (every
// thread: Go's, ONNX Runtime's, the kernel's work on its behalf), to the
// nanosecond; ok is false when the clock cannot be read.
func processCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
