package workers

import "syscall"

// sysProcAttr makes a worker receive SIGTERM if the supervisor dies, so no
// worker outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
