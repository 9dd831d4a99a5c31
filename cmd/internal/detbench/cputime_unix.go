//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, all its threads
// together: on a shared machine it holds where wall-clock time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
