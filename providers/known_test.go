package providers_test

import (
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/tensorrt"
)

type tpuSettings struct {
	Cores int `yaml:"cores"`
}

// Declare refuses, with a panic, a second declaration and metadata svc
// could not use, and leaves the table as it was.
func TestDeclarePanics(t *testing.T) {
	cuda, ok := providers.Info("cuda")
	if !ok {
		t.Fatal("cuda is not declared")
	}
	valid := providers.Known{Name: "tpu", ORTName: "TpuExecutionProvider", Priority: 99, Order: 99, Needs: "a TPU"}
	shared := &tpuSettings{}
	tests := []struct {
		name string
		edit func(k *providers.Known)
		want string
	}{
		{"a second declaration", func(k *providers.Known) { *k = cuda }, `Declare of "cuda": declared twice`},
		{"no name", func(k *providers.Known) { k.Name = "" }, "lower-case letters and digits"},
		{"a name that is no build tag", func(k *providers.Known) { k.Name = "my-tpu" }, "lower-case letters and digits"},
		{"an upper-case name", func(k *providers.Known) { k.Name = "TPU" }, "lower-case letters and digits"},
		{"a bad GOOS", func(k *providers.Known) { k.GOOS = "Windows" }, `GOOS "Windows"`},
		{"a builtin limited to one OS", func(k *providers.Known) { k.Builtin, k.GOOS = true, "linux" }, "builtin provider cannot be limited"},
		{"an ONNX Runtime name without the suffix", func(k *providers.Known) { k.ORTName = "TPU" }, `"TPU" does not end in ExecutionProvider`},
		{"another's ONNX Runtime name", func(k *providers.Known) { k.ORTName = cuda.ORTName }, "CUDAExecutionProvider is cuda's"},
		{"another's priority", func(k *providers.Known) { k.Priority = cuda.Priority }, "priority 50 is cuda's"},
		{"another's order", func(k *providers.Known) { k.Order = cuda.Order }, "order 1 is cuda's"},
		{"no order", func(k *providers.Known) { k.Order = 0 }, "order must be positive"},
		{"no needs text", func(k *providers.Known) { k.Needs = " " }, "no Needs text"},
		{"settings without a starter", func(k *providers.Known) { k.NewSettings = func() any { return &tpuSettings{} } }, "NewSettings and Starter go together"},
		{"a starter without settings", func(k *providers.Known) { k.Starter = "cores: 0\n" }, "NewSettings and Starter go together"},
		{"settings that are no pointer", func(k *providers.Known) {
			k.NewSettings, k.Starter = func() any { return tpuSettings{} }, "cores: 0\n"
		}, "returns providers_test.tpuSettings, want a non-nil pointer to a struct"},
		{"settings that point to no struct", func(k *providers.Known) {
			k.NewSettings, k.Starter = func() any { return new(int) }, "cores: 0\n"
		}, "returns *int, want a non-nil pointer to a struct"},
		{"a nil settings pointer", func(k *providers.Known) {
			k.NewSettings, k.Starter = func() any { return (*tpuSettings)(nil) }, "cores: 0\n"
		}, "want a non-nil pointer to a struct"},
		{"the same settings every time", func(k *providers.Known) {
			k.NewSettings, k.Starter = func() any { return shared }, "cores: 0\n"
		}, "returns the same pointer twice"},
	}
	before := providers.NameList()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := valid
			tt.edit(&k)
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.HasPrefix(msg, "providers: Declare of ") || !strings.Contains(msg, tt.want) {
					t.Errorf("recover() = %v, want a panic mentioning %q", r, tt.want)
				}
			}()
			providers.Declare(k)
		})
	}
	if after := providers.NameList(); after != before || providers.ValidName("tpu") {
		t.Errorf("a failed Declare changed the table: %s, was %s", after, before)
	}
}

// The valid metadata above is accepted: the table only refuses what it
// says it refuses.
func TestDeclaredProvidersAreValid(t *testing.T) {
	known := providers.KnownProviders()
	if len(known) != len(providers.Names()) {
		t.Fatalf("%d known, %d names", len(known), len(providers.Names()))
	}
	builtin := 0
	for _, k := range known {
		if k.Builtin {
			builtin++
			if k.Name != providers.FallbackName {
				t.Errorf("%s is builtin; only the fallback %s is", k.Name, providers.FallbackName)
			}
		}
		if k.NewSettings != nil && k.NewSettings() == k.NewSettings() {
			t.Errorf("%s: NewSettings returns a shared value", k.Name)
		}
	}
	if builtin != 1 {
		t.Errorf("%d builtin providers, want 1", builtin)
	}
	if names := providers.Names(); names[len(names)-1] != providers.FallbackName {
		t.Errorf("Names() = %v, want %s last", names, providers.FallbackName)
	}
}

func TestSettingsOf(t *testing.T) {
	mine := &tensorrt.Settings{FP16: true, EngineCache: "/cache"}
	tests := []struct {
		name string
		give providers.Options
		want tensorrt.Settings
	}{
		{"no settings at all: the defaults", providers.Options{}, tensorrt.Settings{}},
		{"the configuration's", providers.Options{Settings: map[string]any{"tensorrt": mine}}, *mine},
		{"another provider's only", providers.Options{Settings: map[string]any{"openvino": mine}}, tensorrt.Settings{}},
		{"a nil entry", providers.Options{Settings: map[string]any{"tensorrt": (*tensorrt.Settings)(nil)}}, tensorrt.Settings{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := providers.SettingsOf[tensorrt.Settings](tt.give, "tensorrt")
			if got == nil || *got != tt.want {
				t.Errorf("SettingsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := providers.SettingsOf[tensorrt.Settings](providers.Options{Settings: map[string]any{"tensorrt": mine}}, "tensorrt"); got != mine {
		t.Error("SettingsOf copied the configuration's settings, want the pointer itself")
	}
	// A type the provider did not declare: a zero value, never a panic.
	if got := providers.SettingsOf[tpuSettings](providers.Options{Settings: map[string]any{"tensorrt": mine}}, "tensorrt"); got == nil || *got != (tpuSettings{}) {
		t.Errorf("SettingsOf with the wrong type = %+v", got)
	}
}
