package workers

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// AllowedCPUs is the cores this process may run on: its affinity mask,
// which a cgroup's cpuset narrows.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read the affinity mask: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// startPinned starts cmd on cpus (none: as it is). The process inherits
// the affinity of the thread that forks it, so that thread is pinned for
// the fork and given its mask back after: every thread of the child,
// from its first, runs on cpus.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read the affinity mask: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to cores %s: %w", FormatCPUs(cpus), err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		// This thread cannot get its mask back: it ends with the
		// goroutine rather than run pinned (UnlockOSThread is skipped).
		runtime.LockOSThread()
	}
	return err
}

// CanPin says why workers cannot be pinned here ("" : they can).
func CanPin() string { return "" }
