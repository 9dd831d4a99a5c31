//go:build !unix && !windows

package registry

import (
	"errors"
	"os"
	"runtime"
)

// tryLock: this platform has no file locks svc knows how to take.
func tryLock(*os.File) (bool, error) {
	return false, errors.New("file locking is not supported on " + runtime.GOOS)
}

func unlockFile(*os.File) error { return nil }
