//go:build !windows && !(unix && cgo)

package sysprobe

import "errors"

// errNoCgo: loading libraries needs cgo on this platform (svc itself does).
var errNoCgo = errors.New("built without cgo: cannot load shared libraries")

// Load cannot load anything without cgo.
func (Probe) Load(...string) error { return errNoCgo }

// Preload cannot load anything without cgo.
func (Probe) Preload(...string) error { return errNoCgo }

// Locate cannot ask the loader without cgo.
func Locate(string, string) (string, error) { return "", errNoCgo }

// CUDADevices cannot reach the driver without cgo.
func (Probe) CUDADevices() (int, error) { return 0, errNoCgo }
