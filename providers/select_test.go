package providers_test

import (
	"errors"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/providers"
	// Every provider's metadata, as in svc itself.
	_ "github.com/svc-dev/svc/providers/all"
)

// fake is a provider whose usability the test decides.
type fake struct {
	name, ortName string
	priority      int
	unusable      error
	usableCalls   *int
}

var _ providers.Provider = (*fake)(nil)

func (f *fake) Name() string        { return f.name }
func (f *fake) ORTName() string     { return f.ortName }
func (f *fake) Platform() string    { return "fake " + f.name }
func (f *fake) Description() string { return "fake provider " + f.name }
func (f *fake) Priority() int       { return f.priority }
func (f *fake) Usable(providers.Host) error {
	if f.usableCalls != nil {
		*f.usableCalls++
	}
	return f.unusable
}
func (f *fake) Configure(*ort.SessionOptions, providers.Options) error { return nil }

// fakeOf builds a fake with the real name, ONNX Runtime name and priority.
func fakeOf(t *testing.T, name string, unusable error) *fake {
	t.Helper()
	k, ok := providers.Info(name)
	if !ok {
		t.Fatalf("unknown provider %q", name)
	}
	return &fake{name: k.Name, ortName: k.ORTName, priority: k.Priority, unusable: unusable}
}

// ctor returns an fx constructor for p, so it joins the value group the way
// real providers do.
func ctor(p *fake) func() *fake { return func() *fake { return p } }

// choose runs selection through fx with the fakes in the providers group.
func choose(t *testing.T, requested string, fakes ...*fake) (providers.Choice, *observer.ObservedLogs, error) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	var opts []fx.Option
	for _, f := range fakes {
		opts = append(opts, fx.Provide(providers.AsProvider(ctor(f))))
	}
	var c providers.Choice
	app := fx.New(
		fx.NopLogger,
		fx.Options(opts...),
		providers.Selection(),
		fx.Supply(providers.Host{}, providers.Requested(requested), zap.New(core)),
		fx.Populate(&c),
	)
	return c, logs, app.Err()
}

var errNoGPU = errors.New("no GPU here")

func TestSelect(t *testing.T) {
	tests := []struct {
		name         string
		give         string
		fakes        func(t *testing.T) []*fake
		want         string // provider chosen
		wantFallback bool
		wantErr      string
	}{
		{
			name: "automatic picks the highest priority usable",
			fakes: func(t *testing.T) []*fake {
				return []*fake{fakeOf(t, "cpu", nil), fakeOf(t, "cuda", nil), fakeOf(t, "openvino", nil)}
			},
			want: "cuda",
		},
		{
			name: "automatic skips the unusable",
			fakes: func(t *testing.T) []*fake {
				return []*fake{fakeOf(t, "cpu", nil), fakeOf(t, "tensorrt", errNoGPU), fakeOf(t, "cuda", errNoGPU), fakeOf(t, "openvino", nil)}
			},
			want: "openvino",
		},
		{
			name:  "automatic falls to cpu",
			fakes: func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cuda", errNoGPU), fakeOf(t, "cpu", nil)} },
			want:  "cpu",
		},
		{
			name: "requested and usable",
			give: "openvino",
			fakes: func(t *testing.T) []*fake {
				return []*fake{fakeOf(t, "cpu", nil), fakeOf(t, "cuda", nil), fakeOf(t, "openvino", nil)}
			},
			want: "openvino",
		},
		{
			name:         "requested but not usable falls back to cpu",
			give:         "cuda",
			fakes:        func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cpu", nil), fakeOf(t, "cuda", errNoGPU)} },
			want:         "cpu",
			wantFallback: true,
		},
		{
			name:    "requested but not compiled in",
			give:    "tensorrt",
			fakes:   func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cpu", nil), fakeOf(t, "cuda", nil)} },
			wantErr: `provider "tensorrt" is not compiled into this binary; rebuild with: go build -tags tensorrt ./cmd/svc`,
		},
		{
			name:    "directml not compiled in names the OS",
			give:    "directml",
			fakes:   func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cpu", nil)} },
			wantErr: "go build -tags directml ./cmd/svc (on Windows",
		},
		{
			name:    "a value outside the list",
			give:    "tpu",
			fakes:   func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cpu", nil)} },
			wantErr: `invalid --provider "tpu": allowed values are cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu`,
		},
		{
			name:    "no cpu to fall back to",
			give:    "cuda",
			fakes:   func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cuda", errNoGPU)} },
			wantErr: "no CPU provider to fall back to",
		},
		{
			name:    "nothing usable at all",
			fakes:   func(t *testing.T) []*fake { return []*fake{fakeOf(t, "cuda", errNoGPU)} },
			wantErr: "no usable execution provider: cuda: no GPU here",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, logs, err := choose(t, tt.give, tt.fakes(t)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if c.Provider.Name() != tt.want {
				t.Errorf("chose %s, want %s", c.Provider.Name(), tt.want)
			}
			warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
			if tt.wantFallback {
				if c.FallbackReason != errNoGPU.Error() || c.Requested != tt.give {
					t.Errorf("choice = %+v, want a fallback from %s with the reason", c, tt.give)
				}
				if len(warns) != 1 || warns[0].ContextMap()["reason"] != errNoGPU.Error() || warns[0].ContextMap()["requested"] != tt.give {
					t.Errorf("want one warning naming the provider and the reason, got %v", warns)
				}
				if n := c.Note(c.Provider); n != "fallback: "+tt.give+" not usable" {
					t.Errorf("Note = %q", n)
				}
			} else {
				if c.FallbackReason != "" || len(warns) != 0 {
					t.Errorf("unexpected fallback: %+v, warnings %v", c, warns)
				}
				if n := c.Note(c.Provider); n != "" {
					t.Errorf("Note = %q, want none", n)
				}
			}
		})
	}
}

// The errors are typed so the CLI can tell them apart.
func TestSelectErrorTypes(t *testing.T) {
	_, _, err := choose(t, "tensorrt", fakeOf(t, "cpu", nil))
	var nc *providers.NotCompiledError
	if !errors.As(err, &nc) || nc.Name != "tensorrt" {
		t.Errorf("err = %v, want a *NotCompiledError for tensorrt", err)
	}
	_, _, err = choose(t, "gpu", fakeOf(t, "cpu", nil))
	var ue *providers.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("err = %v, want a *UsageError", err)
	}
	_, err = providers.Set{fakeOf(t, "cuda", errNoGPU)}.Select("", providers.Host{})
	if !errors.Is(err, providers.ErrNoProvider) || !errors.Is(err, errNoGPU) {
		t.Errorf("err = %v, want ErrNoProvider wrapping the reason", err)
	}
}

// The group's order means nothing: every order gives the same Set.
func TestSetOrderIgnoresGroupOrder(t *testing.T) {
	names := []string{"cpu", "coreml", "directml", "webgpu", "openvino", "rocm", "cuda", "tensorrt"}
	want := "tensorrt cuda rocm openvino directml coreml webgpu cpu"
	for shift := range names {
		var ps []providers.Provider
		for i := range names {
			ps = append(ps, fakeOf(t, names[(i+shift)%len(names)], nil))
		}
		got := strings.Join(providers.NewSet(providers.SetParams{Providers: ps}).Names(), " ")
		if got != want {
			t.Errorf("shift %d: %s, want %s", shift, got, want)
		}
	}
}

// Automatic selection logs what it skipped at debug level only, and stops
// probing at the first usable provider.
func TestAutomaticSkipsAreDebug(t *testing.T) {
	var cpuCalls int
	cpu := fakeOf(t, "cpu", nil)
	cpu.usableCalls = &cpuCalls
	c, logs, err := choose(t, "", fakeOf(t, "cuda", errNoGPU), fakeOf(t, "openvino", nil), cpu)
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.Name() != "openvino" || cpuCalls != 0 {
		t.Errorf("chose %s, cpu probed %d times", c.Provider.Name(), cpuCalls)
	}
	if len(c.Skipped) != 1 || c.Skipped[0] != (providers.Skip{Name: "cuda", Reason: errNoGPU.Error()}) {
		t.Errorf("Skipped = %+v", c.Skipped)
	}
	if n := logs.FilterLevelExact(zapcore.DebugLevel).FilterField(zap.String("provider", "cuda")).Len(); n != 1 {
		t.Errorf("want one debug line about cuda, got %d", n)
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 0 {
		t.Errorf("automatic selection warned %d times", n)
	}
}

// A provider declared Explicit (webgpu) runs when asked for, but automatic
// selection passes over it, usable or not, and never probes it.
func TestAutomaticPassesOverExplicit(t *testing.T) {
	tests := []struct {
		requested string
		want      string
		skipped   []providers.Skip
	}{
		{"", "cpu", []providers.Skip{{Name: "webgpu", Reason: "used only when asked for (--provider webgpu)"}}},
		{"webgpu", "webgpu", nil},
	}
	for _, tt := range tests {
		t.Run("requested="+tt.requested, func(t *testing.T) {
			var probes int
			webgpu := fakeOf(t, "webgpu", nil)
			webgpu.usableCalls = &probes
			c, _, err := choose(t, tt.requested, webgpu, fakeOf(t, "cpu", nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.Provider.Name() != tt.want || c.FallbackReason != "" {
				t.Errorf("chose %s (fallback %q), want %s", c.Provider.Name(), c.FallbackReason, tt.want)
			}
			if len(c.Skipped) != len(tt.skipped) || (len(tt.skipped) > 0 && c.Skipped[0] != tt.skipped[0]) {
				t.Errorf("Skipped = %+v, want %+v", c.Skipped, tt.skipped)
			}
			if wantProbes := map[string]int{"": 0, "webgpu": 1}[tt.requested]; probes != wantProbes {
				t.Errorf("webgpu probed %d times, want %d", probes, wantProbes)
			}
		})
	}
}

// When the session on the chosen provider fails and the predictor runs on
// the fallback instead, the banner note says so.
func TestNoteForSessionFallback(t *testing.T) {
	cuda, cpu := fakeOf(t, "cuda", nil), fakeOf(t, "cpu", nil)
	c := providers.Choice{Provider: cuda}
	if n := c.Note(cpu); n != "fallback: cuda failed to start a session" {
		t.Errorf("Note = %q", n)
	}
	if n := c.Note(cuda); n != "" {
		t.Errorf("Note = %q, want none", n)
	}
}

func TestInfoAndNames(t *testing.T) {
	if got := providers.NameList(); got != "cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu" {
		t.Fatalf("Names = %v", got)
	}
	prev := 1 << 30
	for _, k := range providers.KnownProviders() {
		if !providers.ValidName(k.Name) {
			t.Errorf("%s is known but not a valid name", k.Name)
		}
		if !strings.HasSuffix(k.ORTName, "ExecutionProvider") {
			t.Errorf("%s: ORT name %q does not end in ExecutionProvider", k.Name, k.ORTName)
		}
		if k.Priority >= prev {
			t.Errorf("%s: priorities are not strictly decreasing", k.Name)
		}
		prev = k.Priority
	}
	for _, n := range providers.Names() {
		if _, ok := providers.Info(n); !ok {
			t.Errorf("%s has no Info", n)
		}
	}
	if providers.ValidName("tpu") || providers.ValidName("") || providers.ValidName("CUDA") {
		t.Error("ValidName accepts a value outside the list")
	}
}
