package bench

import "syscall"

// sysProcAttr puts the child svc serve in its own process group, so a
// Ctrl-C in the terminal reaches svc bench alone (which then stops the
// server with SIGTERM), and makes it receive SIGTERM if svc bench dies, so
// no server outlives the benchmark.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
