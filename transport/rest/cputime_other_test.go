//go:build !linux

package rest

import "time"

func threadCPUTime() (time.Duration, bool) { return 0, false }
