//go:build !linux

package tensorjson

import "time"

func threadCPUTime() (time.Duration, bool) { return 0, false }
