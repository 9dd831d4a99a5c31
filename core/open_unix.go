//go:build unix

package core

import (
	"os"
	"syscall"
)

// openNoWait opens file for reading without waiting: opening a FIFO that
// has no writer returns at once (the caller then refuses it), where a
// plain open would block until one comes.
func openNoWait(file string) (*os.File, error) {
	return os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
