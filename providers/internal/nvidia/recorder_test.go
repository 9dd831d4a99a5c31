package nvidia_test

import (
	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

// recorder is the real machine except that it records what would be
// preloaded instead of loading it, and sees one device.
type recorder struct {
	sysprobe.Probe
	preloaded []string
}

func (r *recorder) Preload(files ...string) error {
	r.preloaded = append(r.preloaded, files...)
	return nil
}

func (r *recorder) CUDADevices() (int, error) { return 1, nil }
