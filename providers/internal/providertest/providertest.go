// Package providertest holds test helpers for provider packages: a fake
// machine and a check of the provider contract.
package providertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

// Machine is a providers.Probe whose files, libraries and CUDA devices the
// test decides.
type Machine struct {
	// Files exist; every other path does not.
	Files map[string]bool
	// LoadErr makes loading a library (by base name) fail.
	LoadErr map[string]error
	// Devices is what CUDADevices returns, with DriverErr.
	Devices   int
	DriverErr error
	// Loaded records each Load call.
	Loaded [][]string
	// Needs lists, by a library's base name, the libraries it needs that
	// the loader would not find; Absent names libraries not found by name.
	Needs  map[string][]string
	Absent map[string]bool
	// Embedded lists the version strings in a library, by base name.
	Embedded map[string][]string
	// PreloadFrom is what Resolve says to preload; Preloaded records what
	// was.
	PreloadFrom, Preloaded []string
}

var _ providers.Probe = (*Machine)(nil)

// Exists reports whether path is in Files.
func (m *Machine) Exists(path string) bool { return m.Files[path] }

// Load records the call and fails for a library in LoadErr.
func (m *Machine) Load(libs ...string) error {
	m.Loaded = append(m.Loaded, libs)
	for _, l := range libs {
		if err := m.LoadErr[filepath.Base(l)]; err != nil {
			return err
		}
	}
	return nil
}

// Resolve reports Needs for the paths and Absent for the names as
// missing, and PreloadFrom as what to preload.
func (m *Machine) Resolve(paths, names, _ []string) sysprobe.Resolution {
	var out sysprobe.Resolution
	for _, p := range paths {
		for _, n := range m.Needs[filepath.Base(p)] {
			out.Missing = append(out.Missing, sysprobe.Unresolved{Name: n, NeededBy: p})
		}
	}
	for _, n := range names {
		if m.Absent[n] {
			out.Missing = append(out.Missing, sysprobe.Unresolved{Name: n})
		}
	}
	out.Preload = m.PreloadFrom
	return out
}

// Preload records the call.
func (m *Machine) Preload(files ...string) error {
	m.Preloaded = append(m.Preloaded, files...)
	return nil
}

// Versions returns Embedded for the library.
func (m *Machine) Versions(path string) ([]string, error) {
	return m.Embedded[filepath.Base(path)], nil
}

// CUDADevices returns Devices and DriverErr.
func (m *Machine) CUDADevices() (int, error) { return m.Devices, m.DriverErr }

// WithLibraries returns a machine where each provider library (short names
// such as "shared", "cuda") sits in dir.
func WithLibraries(dir string, libs ...string) *Machine {
	m := &Machine{Files: map[string]bool{}, LoadErr: map[string]error{}, Needs: map[string][]string{}, Absent: map[string]bool{}, Embedded: map[string][]string{}}
	for _, l := range libs {
		m.Files[filepath.Join(dir, providers.ProviderLibrary(l))] = true
	}
	return m
}

// CheckContract checks what every provider promises: it is registered under
// its name, its name, ONNX Runtime name and priority match what its package
// declared (providers.Declare), and it describes itself.
func CheckContract(t *testing.T, p providers.Provider) {
	t.Helper()
	k, ok := providers.Info(p.Name())
	if !ok {
		t.Fatalf("%s is not a known provider name", p.Name())
	}
	if p.ORTName() != k.ORTName || p.Priority() != k.Priority {
		t.Errorf("%s: ORTName %q priority %d; its declaration says %q %d", p.Name(), p.ORTName(), p.Priority(), k.ORTName, k.Priority)
	}
	if !strings.HasSuffix(p.ORTName(), "ExecutionProvider") {
		t.Errorf("%s: ORT name %q does not end in ExecutionProvider", p.Name(), p.ORTName())
	}
	if p.Platform() == "" || p.Description() == "" {
		t.Errorf("%s: empty platform or description", p.Name())
	}
	compiled := false
	for _, n := range providers.Compiled() {
		compiled = compiled || n == p.Name()
	}
	if !compiled {
		t.Errorf("%s is not registered (Compiled() = %v)", p.Name(), providers.Compiled())
	}
	got, ok := providers.Registered().Lookup(p.Name())
	if !ok || got.ORTName() != p.ORTName() {
		t.Errorf("Registered() has no %s", p.Name())
	}
}

// LoadORT loads the test ONNX Runtime library (onnxrttest.Load: once per
// test process, which it stays loaded in) and returns its Host.
func LoadORT(t *testing.T) providers.Host {
	t.Helper()
	env := onnxrttest.Load(t)
	avail, err := env.AvailableProviders()
	if err != nil {
		t.Fatalf("providers of the ONNX Runtime test library: %v", err)
	}
	return providers.NewHost(env.LibraryPath(), avail)
}

// Model returns the path of a committed test model.
func Model(t *testing.T, name string) string {
	t.Helper()
	wd, _ := os.Getwd()
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		p := filepath.Join(d, "testdata", "models", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("test model %s not found above %s", name, wd)
	return ""
}
