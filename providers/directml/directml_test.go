//go:build directml && windows

package directml_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/directml"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, directml.New()) }

// adapterMachine is a fake machine that also lists display adapters.
type adapterMachine struct {
	*providertest.Machine
	adapters []sysprobe.Adapter
}

func (m *adapterMachine) DXGIAdapters() ([]sysprobe.Adapter, error) { return m.adapters, nil }

var _ directml.AdapterLister = (*adapterMachine)(nil)

// The real machine's probe can list adapters.
var _ directml.AdapterLister = sysprobe.Probe{}

func TestUsable(t *testing.T) {
	dir := `C:\svc\lib`
	offered := []string{"DmlExecutionProvider", "CPUExecutionProvider"}
	m := &providertest.Machine{Files: map[string]bool{filepath.Join(dir, "DirectML.dll"): true}, LoadErr: map[string]error{}}
	if err := directml.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: m}); err != nil {
		t.Fatalf("not usable: %v", err)
	}
	if len(m.Loaded) != 1 || m.Loaded[0][1] != filepath.Join(dir, "DirectML.dll") {
		t.Errorf("loaded %v, want d3d12.dll and the DirectML.dll beside onnxruntime.dll", m.Loaded)
	}
	// The real machine lists adapters; a machine with only WARP is not
	// enough.
	warp := &adapterMachine{Machine: m, adapters: []sysprobe.Adapter{{Name: "Microsoft Basic Render Driver", Software: true}}}
	err := directml.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: warp})
	if err == nil || !strings.Contains(err.Error(), "only the software adapter Microsoft Basic Render Driver") {
		t.Errorf("with WARP only: %v", err)
	}
	gpu := &adapterMachine{Machine: m, adapters: []sysprobe.Adapter{{Name: "Some GPU"}, {Name: "Microsoft Basic Render Driver", Software: true}}}
	if err := directml.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: gpu}); err != nil {
		t.Errorf("with a GPU: %v", err)
	}

	m.LoadErr["d3d12.dll"] = errors.New("The specified module could not be found.")
	err = directml.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: m})
	if err == nil || !strings.Contains(err.Error(), "DirectX 12 or DirectML not available") {
		t.Errorf("without Direct3D 12: %v", err)
	}
}
