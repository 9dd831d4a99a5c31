// Package sysprobe looks at the real machine for the providers: whether a
// file or device node exists, whether shared libraries load, how many CUDA
// devices the driver sees. Nothing here runs until a provider asks.
package sysprobe

import (
	"os"
	"strconv"
)

// Probe is the real machine.
type Probe struct{}

// Exists reports whether path exists.
func (Probe) Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cudaResult names the CUresult codes cuInit returns when there is nothing
// to run on; the rest are reported by number.
func cudaResult(code int) string {
	switch code {
	case 3:
		return "CUDA_ERROR_NOT_INITIALIZED"
	case 35:
		return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than the CUDA runtime)"
	case 100:
		return "CUDA_ERROR_NO_DEVICE"
	case 101:
		return "CUDA_ERROR_INVALID_DEVICE"
	case 304:
		return "CUDA_ERROR_OPERATING_SYSTEM"
	case 999:
		return "CUDA_ERROR_UNKNOWN"
	}
	return "CUresult " + strconv.Itoa(code)
}
