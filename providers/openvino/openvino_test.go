//go:build openvino

package openvino_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/openvino"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, openvino.New()) }

const dir = "/opt/ort/lib"

func TestUsable(t *testing.T) {
	offered := []string{"OpenVINOExecutionProvider", "CPUExecutionProvider"}
	m := providertest.WithLibraries(dir, "shared", "openvino")
	if err := openvino.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: m}); err != nil {
		t.Fatalf("not usable with everything there: %v", err)
	}
	m.LoadErr["libonnxruntime_providers_openvino.so"] = errors.New("libopenvino.so.2541: cannot open shared object file")
	err := openvino.New().Usable(providers.Host{LibraryProviders: offered, LibraryDir: dir, Probe: m})
	if err == nil || !strings.Contains(err.Error(), "libopenvino.so") {
		t.Errorf("without OpenVINO: %v", err)
	}
	err = openvino.New().Usable(providers.Host{LibraryProviders: []string{"CPUExecutionProvider"}, LibraryDir: dir, Probe: providertest.WithLibraries(dir)})
	if err == nil || !strings.Contains(err.Error(), "does not offer OpenVINOExecutionProvider") {
		t.Errorf("library without OpenVINO: %v", err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"", "CPU"},
		{"GPU", "GPU"},
		{"AUTO:GPU,CPU", "AUTO:GPU,CPU"},
	}
	if got, want := openvino.Options(providers.Options{}), map[string]string{"device_type": "CPU"}; !maps.Equal(got, want) {
		t.Errorf("Options without settings = %v, want %v", got, want)
	}
	for _, tt := range tests {
		got := openvino.Options(providers.Options{Settings: map[string]any{"openvino": &openvino.Settings{DeviceType: tt.give}}})
		if want := map[string]string{"device_type": tt.want}; !maps.Equal(got, want) {
			t.Errorf("Options(%q) = %v, want %v", tt.give, got, want)
		}
	}
}

// providers.openvino.device_type reaches the provider options as before.
func TestOptionsFromTheConfigurationFile(t *testing.T) {
	tests := []struct{ body, want string }{
		{"name: x\n", "CPU"},
		{"providers:\n  openvino:\n    device_type: AUTO:GPU,CPU\n", "AUTO:GPU,CPU"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "svc.yml")
		if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := openvino.Options(c.ProviderOptions())["device_type"]; got != tt.want {
			t.Errorf("%q: device_type = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestConfigure(t *testing.T) {
	host := providertest.LoadORT(t)
	so, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	err = openvino.New().Configure(so, providers.Options{Settings: map[string]any{"openvino": &openvino.Settings{DeviceType: "CPU"}}})
	if openvino.New().Usable(host) == nil {
		if err != nil {
			t.Fatalf("OpenVINO is usable here but Configure failed: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "append OpenVINO provider (device_type CPU)") {
		t.Errorf("Configure = %v, want the refusal with the device type", err)
	}
}
