// Package nvidia holds what the NVIDIA GPU providers (cuda, and the one
// that puts its own engine in front of CUDA) share: the run-time check for
// the provider libraries, what they need and a CUDA device, and the CUDA
// provider options.
package nvidia

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/providers"
)

// GPUPackage is where the NVIDIA GPU provider libraries of ONNX Runtime
// 1.29.0 come from ('make lib-cuda' fetches them; the onnxruntime-node
// package ships the core library only).
const GPUPackage = "'make lib-cuda', or npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9, Plugins/Linux/x64/"

// Driver is the NVIDIA driver's library, which the CUDA provider library
// links directly.
const Driver = "libcuda.so.1"

// Check returns nil when the loaded ONNX Runtime library offers ortName,
// the provider libraries (e.g. "shared", "cuda") sit beside it, are of its
// exact version, and every library they need resolves (their DT_NEEDED
// entries, recursively, plus dlopened, the libraries ONNX Runtime opens by
// name at run time, e.g. cuDNN), and the NVIDIA driver sees at least one
// device. Otherwise it says every reason on one line, naming
// each missing library and what it is part of.
func Check(h providers.Host, ortName string, libs []string, dlopened ...string) error {
	var errs []error
	if err := h.RequireOffered(ortName); err != nil {
		errs = append(errs, err)
	}
	m := h.Machine()
	files := make([]string, len(libs))
	for i, l := range libs {
		files[i] = providers.ProviderLibrary(l)
	}
	driverMissing := false
	if !allBeside(h, files) {
		err := h.LoadBeside(files...)
		var missing *providers.MissingLibraryError
		if errors.As(err, &missing) && missing.Dir != "" && runtime.GOOS == "linux" {
			err = fmt.Errorf("%w (get it with %s)", err, GPUPackage)
		}
		errs = append(errs, err)
	} else if err := versionCheck(h, files); err != nil {
		errs = append(errs, err)
	} else {
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = h.LibraryFile(f)
		}
		var names []string
		res := m.Resolve(paths, dlopened, append(append([]string(nil), h.SearchDirs...), LibraryDirs(DefaultEnv())...))
		for _, u := range res.Missing {
			names = append(names, u.Name)
			driverMissing = driverMissing || u.Name == Driver
		}
		// The provider libraries themselves are never loaded here: their
		// initialisers call into ONNX Runtime (Provider_GetHost), which
		// crashes outside ONNX Runtime's own loading. What they need from
		// the extra directories is preloaded, so that ONNX Runtime's own
		// loading finds it.
		if len(names) > 0 {
			errs = append(errs, Diagnose(names))
		} else if err := m.Preload(res.Preload...); err != nil {
			errs = append(errs, err)
		}
	}
	if !driverMissing {
		n, err := m.CUDADevices()
		switch {
		case err != nil:
			errs = append(errs, err)
		case n == 0:
			errs = append(errs, errors.New("the NVIDIA driver sees no CUDA device"))
		}
	}
	return providers.Reasons(errs...)
}

// allBeside reports whether every file is beside the ONNX Runtime library.
func allBeside(h providers.Host, files []string) bool {
	for _, f := range files {
		p := h.LibraryFile(f)
		if p == "" || !h.Machine().Exists(p) {
			return false
		}
	}
	return true
}

// VersionError says a provider library is not of the ONNX Runtime core
// library's version, which would crash ONNX Runtime when it loads it.
type VersionError struct {
	File    string
	Core    string
	Version []string // ONNX Runtime version strings found in the file
}

func (e *VersionError) Error() string {
	found := "no ONNX Runtime version string"
	if len(e.Version) > 0 {
		found = "version " + strings.Join(e.Version, " or ")
	}
	return fmt.Sprintf("%s is not ONNX Runtime %s (it has %s): provider libraries must be the core library's exact version; refusing to load it (get matching ones with %s)",
		e.File, e.Core, found, GPUPackage)
}

// versioned are the provider libraries that embed ONNX Runtime's version
// string (ORT_VERSION); the small shared bridge library does not.
var versioned = []string{providers.ProviderLibrary("cuda"), providers.ProviderLibrary("tensorrt")}

// versionCheck refuses provider libraries built for another ONNX Runtime
// version than the loaded core's: the core's version must be among the
// version strings the library embeds. Unknown core version: no check.
func versionCheck(h providers.Host, files []string) error {
	if h.LibraryVersion == "" {
		return nil
	}
	var errs []error
	for _, f := range files {
		if !slices.Contains(versioned, f) {
			continue
		}
		vs, err := h.Machine().Versions(h.LibraryFile(f))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.Contains(vs, h.LibraryVersion) {
			errs = append(errs, &VersionError{File: f, Core: h.LibraryVersion, Version: likelyORT(vs)})
		}
	}
	return providers.Reasons(errs...)
}

// likelyORT keeps the version strings that can be ONNX Runtime releases
// (1.10 and later) among those found in a library.
func likelyORT(vs []string) []string {
	var out []string
	for _, v := range vs {
		parts := strings.Split(v, ".")
		if minor, err := strconv.Atoi(parts[1]); err == nil && minor >= 10 {
			out = append(out, v)
		}
	}
	return out
}

// component is a group of libraries that come together, and how to get
// them.
type component struct {
	prefixes []string
	what     string
}

// components say what each library the NVIDIA provider libraries need is
// part of (ONNX Runtime 1.29.0's are built for CUDA 13, cuDNN 9 and
// TensorRT 10). The pip packages are NVIDIA's wheels, which PyTorch
// installs too.
var components = []component{
	{[]string{"libcuda.so"}, "NVIDIA driver"},
	{[]string{"libcudart.so"}, "CUDA 13 runtime: install CUDA 13 or pip install nvidia-cuda-runtime"},
	{[]string{"libcublasLt.so", "libcublas.so"}, "CUDA 13 cuBLAS: install CUDA 13 or pip install nvidia-cublas"},
	{[]string{"libcurand.so"}, "CUDA 13 cuRAND: install CUDA 13 or pip install nvidia-curand"},
	{[]string{"libcufft.so"}, "CUDA 13 cuFFT: install CUDA 13 or pip install nvidia-cufft"},
	{[]string{"libcudnn"}, "cuDNN 9 for CUDA 13: install cuDNN 9 or pip install nvidia-cudnn-cu13"},
	{[]string{"libnvinfer", "libnvonnxparser"}, "TensorRT 10: install TensorRT 10 for CUDA 13"},
	{[]string{"libonnxruntime_providers_"}, "ONNX Runtime provider libraries: " + GPUPackage},
}

// PartOf says what a library is part of and how to get it ("" when svc
// does not know the library).
func PartOf(name string) string {
	for _, c := range components {
		for _, p := range c.prefixes {
			if strings.HasPrefix(name, p) {
				return c.what
			}
		}
	}
	return ""
}

// Diagnose says which libraries are missing, grouped by what they are part
// of, in the order given: "libcublasLt.so.13 and libcublas.so.13 not found
// (CUDA 13 cuBLAS: …); libcuda.so.1 not found (NVIDIA driver)".
func Diagnose(missing []string) error {
	var order []string
	groups := map[string][]string{}
	for _, n := range missing {
		what := PartOf(n)
		if _, ok := groups[what]; !ok {
			order = append(order, what)
		}
		groups[what] = append(groups[what], n)
	}
	parts := make([]string, 0, len(order))
	for _, what := range order {
		names := groups[what]
		list := strings.Join(names, ", ")
		if len(names) == 2 {
			list = names[0] + " and " + names[1]
		}
		s := list + " not found"
		if what != "" {
			s += " (" + what + ")"
		}
		parts = append(parts, s)
	}
	return &MissingError{Names: missing, msg: strings.Join(parts, "; ")}
}

// MissingError names the libraries a provider library needs that the
// dynamic loader would not find.
type MissingError struct {
	Names []string
	msg   string
}

func (e *MissingError) Error() string { return e.msg }

// CUDAOptions are the CUDA provider's options from the configuration: the
// device, and the arena's memory cap when one is set.
func CUDAOptions(o providers.Options) map[string]string {
	m := map[string]string{"device_id": strconv.Itoa(o.DeviceID)}
	if o.MemoryLimit > 0 {
		m["gpu_mem_limit"] = strconv.FormatInt(o.MemoryLimit, 10)
	}
	return m
}
