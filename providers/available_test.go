package providers_test

import (
	"slices"
	"testing"

	"github.com/svc-dev/svc/providers"
)

// Available lists the compiled-in providers usable here, highest priority
// first, by their ONNX Runtime names, and probes each at most once per
// start: selection's findings are reused.
func TestAvailable(t *testing.T) {
	tests := []struct {
		name      string
		requested string
		unusable  map[string]bool // by provider name
		want      []string
		// wantCalls is how many times each provider's Usable ran in all,
		// selection included.
		wantCalls map[string]int
	}{
		{
			name:      "no GPU here, automatic choice: only the CPU",
			unusable:  map[string]bool{"cuda": true, "tensorrt": true, "webgpu": true},
			want:      []string{"CPUExecutionProvider"},
			wantCalls: map[string]int{"tensorrt": 1, "cuda": 1, "webgpu": 1, "cpu": 1},
		},
		{
			name:      "CUDA usable, TensorRT not: CUDA and the probed WebGPU and CPU",
			unusable:  map[string]bool{"tensorrt": true},
			want:      []string{"CUDAExecutionProvider", "WebGpuExecutionProvider", "CPUExecutionProvider"},
			wantCalls: map[string]int{"tensorrt": 1, "cuda": 1, "webgpu": 1, "cpu": 1},
		},
		{
			name:      "webgpu asked for and usable",
			requested: "webgpu",
			unusable:  map[string]bool{"cuda": true, "tensorrt": true},
			want:      []string{"WebGpuExecutionProvider", "CPUExecutionProvider"},
			wantCalls: map[string]int{"tensorrt": 1, "cuda": 1, "webgpu": 1, "cpu": 1},
		},
		{
			name:      "cuda asked for, not usable: the CPU fallback",
			requested: "cuda",
			unusable:  map[string]bool{"cuda": true, "tensorrt": true, "webgpu": true},
			want:      []string{"CPUExecutionProvider"},
			wantCalls: map[string]int{"tensorrt": 1, "cuda": 1, "webgpu": 1, "cpu": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := map[string]*int{}
			var fakes []*fake
			for _, name := range []string{"cpu", "cuda", "tensorrt", "webgpu"} {
				var err error
				if tt.unusable[name] {
					err = errNoGPU
				}
				f := fakeOf(t, name, err)
				calls[name] = new(int)
				f.usableCalls = calls[name]
				fakes = append(fakes, f)
			}
			c, _, err := choose(t, tt.requested, fakes...)
			if err != nil {
				t.Fatal(err)
			}
			ps := make([]providers.Provider, len(fakes))
			for i, f := range fakes {
				ps[i] = f
			}
			set := providers.NewSet(providers.SetParams{Providers: ps})
			if got := set.Available(providers.Host{}, c); !slices.Equal(got, tt.want) {
				t.Errorf("Available = %q, want %q", got, tt.want)
			}
			for name, want := range tt.wantCalls {
				if got := *calls[name]; got != want {
					t.Errorf("%s: Usable ran %d times, want %d", name, got, want)
				}
			}
		})
	}
}
