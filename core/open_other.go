//go:build !unix

package core

import "os"

// openNoWait opens file for reading: no open blocks here (Windows has no
// FIFO in the file system).
func openNoWait(file string) (*os.File, error) {
	return os.Open(file)
}
