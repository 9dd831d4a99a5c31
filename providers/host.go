package providers

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

// Host is what a provider may ask about the machine it runs on.
type Host struct {
	// LibraryProviders is ONNX Runtime's GetAvailableProviders on the loaded
	// library (names ending in ExecutionProvider).
	LibraryProviders []string
	// LibraryDir is the directory of the loaded ONNX Runtime library, where
	// ONNX Runtime looks for provider libraries such as
	// libonnxruntime_providers_cuda.so ("" = unknown).
	LibraryDir string
	// LibraryVersion is the loaded ONNX Runtime library's version, e.g.
	// "1.29.0" ("" = unknown). Provider libraries must be of this version.
	LibraryVersion string
	// SearchDirs are extra directories holding libraries that provider
	// libraries need (e.g. CUDA from Python wheels), preloaded before the
	// provider library loads; dependency checks search them first.
	SearchDirs []string
	// Probe loads libraries and looks for devices (nil = this machine).
	Probe Probe
}

// Probe answers questions about the machine. Tests replace it with a fake.
type Probe interface {
	// Exists reports whether path exists (a file or a device node).
	Exists(path string) bool
	// Load opens the shared libraries in order, each a path or a bare name
	// for the system loader, then closes them; it returns the loader's
	// error for the first that does not load.
	Load(libs ...string) error
	// CUDADevices is the number of CUDA devices the NVIDIA driver sees; the
	// error says why there is no driver or no device.
	CUDADevices() (int, error)
	// Resolve resolves, the way the dynamic loader would, the DT_NEEDED
	// entries of the libraries at paths, recursively, and the bare names
	// (libraries loaded at run time by name), searching dirs first: it
	// lists what is missing and what must be preloaded from dirs. Without
	// a way to tell on this OS it returns nothing.
	Resolve(paths, names, dirs []string) sysprobe.Resolution
	// Preload loads files in order, globally, for the rest of the process.
	Preload(files ...string) error
	// Versions lists the ONNX Runtime version strings ("1.29.0") embedded
	// in the library at path.
	Versions(path string) ([]string, error)
}

var _ Probe = sysprobe.Probe{}

// NewHost describes this machine for a loaded ONNX Runtime library: the
// path or bare name it was loaded from, and its GetAvailableProviders.
func NewHost(libraryPath string, libraryProviders []string) Host {
	h := Host{LibraryProviders: libraryProviders, Probe: sysprobe.Probe{}}
	if ort.IsInitialized() {
		h.LibraryVersion = ort.GetVersion()
	}
	switch {
	case libraryPath == "":
	case strings.ContainsAny(libraryPath, `/\`):
		h.LibraryDir = filepath.Dir(libraryPath)
	default:
		// Found by the system loader: ask the loader where it is.
		if p, err := sysprobe.Locate(libraryPath, "OrtGetApiBase"); err == nil {
			h.LibraryDir = filepath.Dir(p)
		}
	}
	return h
}

// Machine returns the host's probe, or the real machine when none is set.
func (h Host) Machine() Probe {
	if h.Probe == nil {
		return sysprobe.Probe{}
	}
	return h.Probe
}

// libraryDir is LibraryDir or, on the real machine when it is unset, the
// directory the loader reports for the already loaded ONNX Runtime library
// (asking by its soname finds the loaded copy).
func (h Host) libraryDir() string {
	if h.LibraryDir != "" || h.Probe != nil {
		return h.LibraryDir
	}
	for _, name := range ortLibraryNames() {
		if p, err := sysprobe.Locate(name, "OrtGetApiBase"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

// ortLibraryNames are the ONNX Runtime library's names for the loader.
func ortLibraryNames() []string {
	switch runtime.GOOS {
	case "windows":
		return []string{"onnxruntime.dll"}
	case "darwin":
		return []string{"libonnxruntime.1.dylib", "libonnxruntime.dylib"}
	}
	return []string{"libonnxruntime.so.1", "libonnxruntime.so"}
}

// Offers reports whether the loaded library offers the named provider.
func (h Host) Offers(ortName string) bool {
	for _, n := range h.LibraryProviders {
		if n == ortName {
			return true
		}
	}
	return false
}

// RequireOffered returns an error unless the loaded library offers ortName.
func (h Host) RequireOffered(ortName string) error {
	if h.Offers(ortName) {
		return nil
	}
	return fmt.Errorf("the ONNX Runtime library does not offer %s", ortName)
}

// MissingLibraryError says a provider library is not beside the ONNX
// Runtime library, where ONNX Runtime loads it from.
type MissingLibraryError struct {
	File string
	Dir  string
}

func (e *MissingLibraryError) Error() string {
	if e.Dir == "" {
		return fmt.Sprintf("%s: cannot tell where the ONNX Runtime library was loaded from", e.File)
	}
	return fmt.Sprintf("%s is not beside the ONNX Runtime library in %s", e.File, e.Dir)
}

// LibraryFile is the path of a library file beside the ONNX Runtime
// library ("" when the library's directory is unknown).
func (h Host) LibraryFile(file string) string {
	dir := h.libraryDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, file)
}

// LoadBeside checks that each file is in the library's directory and that
// they load, in order (each may need the ones before it); loading also
// resolves what they link against, such as the CUDA libraries.
func (h Host) LoadBeside(files ...string) error {
	m := h.Machine()
	dir := h.libraryDir()
	paths := make([]string, len(files))
	for i, f := range files {
		if dir == "" {
			return &MissingLibraryError{File: f}
		}
		paths[i] = filepath.Join(dir, f)
		if !m.Exists(paths[i]) {
			return &MissingLibraryError{File: f, Dir: dir}
		}
	}
	if err := m.Load(paths...); err != nil {
		return fmt.Errorf("cannot load: %w", err)
	}
	return nil
}

// ProviderLibrary is the file name ONNX Runtime loads a provider library
// from on this OS, e.g. "cuda" → libonnxruntime_providers_cuda.so.
func ProviderLibrary(name string) string {
	switch runtime.GOOS {
	case "windows":
		return "onnxruntime_providers_" + name + ".dll"
	case "darwin":
		return "libonnxruntime_providers_" + name + ".dylib"
	}
	return "libonnxruntime_providers_" + name + ".so"
}

// Reasons puts the reasons a provider cannot run on one line, separated by
// semicolons (nil when there are none).
func Reasons(errs ...error) error {
	var kept []error
	for _, e := range errs {
		if e != nil {
			kept = append(kept, e)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	msg := kept[0].Error()
	for _, e := range kept[1:] {
		msg += "; " + e.Error()
	}
	return &reasonsError{msg: msg, errs: kept}
}

type reasonsError struct {
	msg  string
	errs []error
}

func (e *reasonsError) Error() string   { return e.msg }
func (e *reasonsError) Unwrap() []error { return e.errs }
