//go:build !linux

package workers

import (
	"errors"
	"os/exec"
	"runtime"
)

// AllowedCPUs is not known outside Linux.
func AllowedCPUs() ([]int, error) {
	return nil, errors.New("pinning workers to cores needs Linux")
}

// startPinned starts cmd unpinned: pinning needs Linux.
func startPinned(cmd *exec.Cmd, _ []int) error { return cmd.Start() }

// CanPin says why workers cannot be pinned here.
func CanPin() string { return "pinning workers to cores needs Linux, and this is " + runtime.GOOS }
