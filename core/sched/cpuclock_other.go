//go:build !linux && !darwin && !freebsd

package sched

import "time"

// processCPU is not read here: Windows counts process CPU time in clock
// ticks (15.6 ms), too coarse for the size tuner's phases of a few runs,
// which then time them by the wall clock.
func processCPU() (time.Duration, bool) { return 0, false }
