//go:build !unix

package main

import "time"

var start = time.Now()

// cpuTime is wall-clock time where the process's CPU time is not read.
func cpuTime() time.Duration { return time.Since(start) }
