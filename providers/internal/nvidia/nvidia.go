// Package nvidia holds what the NVIDIA GPU providers (cuda, and the one
// that puts its own engine in front of CUDA) share: the run-time check for
// the provider libraries and a CUDA device, and the CUDA provider options.
package nvidia

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"

	"github.com/svc-dev/svc/providers"
)

// GPUPackage is where the official NVIDIA GPU provider libraries for ONNX
// Runtime 1.29.0 come from (the npm package ships the CPU library only).
const GPUPackage = "NuGet Microsoft.ML.OnnxRuntime.Gpu.Linux 1.29.0, runtimes/linux-x64/native/"

// Check returns nil when the loaded ONNX Runtime library offers ortName,
// the provider libraries (e.g. "shared", "cuda") sit beside it and load
// (which needs the CUDA and cuDNN libraries, and whatever else each provider
// library links to), and
// the NVIDIA driver sees at least one device. Otherwise it says every
// reason, so one look tells the whole story.
func Check(h providers.Host, ortName string, libs ...string) error {
	var errs []error
	if err := h.RequireOffered(ortName); err != nil {
		errs = append(errs, err)
	}
	files := make([]string, len(libs))
	for i, l := range libs {
		files[i] = providers.ProviderLibrary(l)
	}
	if err := h.LoadBeside(files...); err != nil {
		var missing *providers.MissingLibraryError
		if errors.As(err, &missing) && missing.Dir != "" && runtime.GOOS == "linux" {
			err = fmt.Errorf("%w (get it from %s)", err, GPUPackage)
		}
		errs = append(errs, err)
	}
	n, err := h.Machine().CUDADevices()
	switch {
	case err != nil:
		errs = append(errs, err)
	case n == 0:
		errs = append(errs, errors.New("the NVIDIA driver sees no CUDA device"))
	}
	return providers.Reasons(errs...)
}

// CUDAOptions are the CUDA provider's options from the configuration: the
// device, and the arena's memory cap when one is set.
func CUDAOptions(o providers.Options) map[string]string {
	m := map[string]string{"device_id": strconv.Itoa(o.DeviceID)}
	if o.MemoryLimit > 0 {
		m["gpu_mem_limit"] = strconv.FormatInt(o.MemoryLimit, 10)
	}
	return m
}
