package providers_test

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/cpu"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func TestCPUContract(t *testing.T) {
	providertest.CheckContract(t, cpu.New())
	if err := cpu.New().Usable(providers.Host{}); err != nil {
		t.Errorf("cpu is not usable: %v", err)
	}
}

func TestRegisteredHasCPU(t *testing.T) {
	if got := providers.Compiled(); !contains(got, "cpu") {
		t.Fatalf("Compiled() = %v, want cpu in it", got)
	}
	set := providers.Registered()
	if fb := set.Fallback(); fb == nil || fb.Name() != "cpu" || fb.ORTName() != "CPUExecutionProvider" {
		t.Fatalf("Registered().Fallback() = %v", fb)
	}
}

// Module puts the registered providers into the group and selects one.
func TestModuleSelectsFromTheRegistry(t *testing.T) {
	var c providers.Choice
	var set providers.Set
	app := fx.New(fx.NopLogger,
		providers.Module(),
		fx.Supply(providers.Host{LibraryProviders: []string{"CPUExecutionProvider"}}, providers.Requested(""), zap.NewNop()),
		fx.Populate(&c, &set),
	)
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if c.Provider == nil || c.Provider.Name() != "cpu" {
		t.Errorf("chose %v, want cpu (the only provider the library offers)", c.Provider)
	}
	// The set is in priority order, Compiled sorted by name.
	names := set.Names()
	slices.Sort(names)
	if strings.Join(names, ",") != strings.Join(providers.Compiled(), ",") {
		t.Errorf("set %v, compiled %v", set.Names(), providers.Compiled())
	}
}

func TestRegisterPanics(t *testing.T) {
	// A declared provider this test binary does not compile in (which one
	// depends on the build tags).
	absent := ""
	for _, k := range providers.KnownProviders() {
		if !contains(providers.Compiled(), k.Name) {
			absent = k.Name
		}
	}
	if absent == "" {
		t.Fatalf("every declared provider is compiled in: %v", providers.Compiled())
	}
	tests := []struct {
		name string
		give string
		ctor func() providers.Provider
		want string
	}{
		{"a second registration", "cpu", func() providers.Provider { return cpu.New() }, "twice"},
		{"a name outside the list", "tpu", func() providers.Provider { return cpu.New() }, "unknown provider"},
		{"a nil constructor", absent, nil, "nil constructor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tt.want) {
					t.Errorf("recover() = %v, want a panic mentioning %q", r, tt.want)
				}
			}()
			providers.Register(tt.give, tt.ctor)
		})
	}
	if got := providers.Compiled(); contains(got, "tpu") || contains(got, absent) {
		t.Errorf("a failed Register changed the registry: %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
