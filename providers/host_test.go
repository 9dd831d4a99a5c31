package providers_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func TestRequireOffered(t *testing.T) {
	h := providers.Host{LibraryProviders: []string{"CUDAExecutionProvider", "CPUExecutionProvider"}}
	if err := h.RequireOffered("CUDAExecutionProvider"); err != nil {
		t.Errorf("offered: %v", err)
	}
	err := h.RequireOffered("OpenVINOExecutionProvider")
	if err == nil || err.Error() != "the ONNX Runtime library does not offer OpenVINOExecutionProvider" {
		t.Errorf("not offered: %v", err)
	}
}

func TestLoadBeside(t *testing.T) {
	dir := filepath.FromSlash("/opt/ort/lib")
	shared, cuda := providers.ProviderLibrary("shared"), providers.ProviderLibrary("cuda")
	tests := []struct {
		name    string
		libDir  string
		files   []string
		loadErr map[string]error
		want    string // "" = nil
	}{
		{name: "both present and loading", libDir: dir, files: []string{shared, cuda}},
		{name: "one missing", libDir: dir, files: []string{shared}, want: cuda + " is not beside the ONNX Runtime library in " + dir},
		{name: "unknown library directory", libDir: "", files: []string{shared, cuda}, want: shared + ": cannot tell where the ONNX Runtime library was loaded from"},
		{
			name: "present but a dependency is missing", libDir: dir, files: []string{shared, cuda},
			loadErr: map[string]error{cuda: errors.New("libcudnn.so.9: cannot open shared object file")},
			want:    "cannot load: libcudnn.so.9: cannot open shared object file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &providertest.Machine{Files: map[string]bool{}, LoadErr: tt.loadErr}
			for _, f := range tt.files {
				m.Files[filepath.Join(dir, f)] = true
			}
			h := providers.Host{LibraryDir: tt.libDir, Probe: m}
			err := h.LoadBeside(shared, cuda)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := []string{filepath.Join(dir, shared), filepath.Join(dir, cuda)}
				if len(m.Loaded) != 1 || strings.Join(m.Loaded[0], " ") != strings.Join(want, " ") {
					t.Errorf("loaded %v, want %v in one call, in order", m.Loaded, want)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			var missing *providers.MissingLibraryError
			if strings.Contains(tt.want, "beside") && !errors.As(err, &missing) {
				t.Errorf("err is not a *MissingLibraryError: %T", err)
			}
		})
	}
}

func TestNewHost(t *testing.T) {
	h := providers.NewHost(filepath.FromSlash("/opt/ort/lib/libonnxruntime.so.1"), []string{"CPUExecutionProvider"})
	if h.LibraryDir != filepath.FromSlash("/opt/ort/lib") || !h.Offers("CPUExecutionProvider") || h.Probe == nil {
		t.Errorf("NewHost = %+v", h)
	}
	// A bare name the loader cannot find leaves the directory unknown.
	if h := providers.NewHost("libsvc-no-such-library.so", nil); h.LibraryDir != "" {
		t.Errorf("LibraryDir = %q for a library that is nowhere", h.LibraryDir)
	}
}

func TestReasons(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	if providers.Reasons(nil, nil) != nil {
		t.Error("no reasons is not nil")
	}
	if err := providers.Reasons(nil, a); err != a {
		t.Errorf("one reason = %v", err)
	}
	err := providers.Reasons(a, nil, b)
	if err.Error() != "a; b" || !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("two reasons = %v", err)
	}
}

func TestReport(t *testing.T) {
	set := providers.NewSet(providers.SetParams{Providers: []providers.Provider{
		fakeOf(t, "cpu", nil), fakeOf(t, "cuda", errNoGPU),
	}})
	h := providers.Host{LibraryProviders: []string{"TensorrtExecutionProvider", "CUDAExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider", "CPUExecutionProvider"}}
	rows := set.Report(h)
	if len(rows) != len(providers.Names()) {
		t.Fatalf("%d rows, want one per provider", len(rows))
	}
	byName := map[string]providers.Status{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if r := byName["tensorrt"]; r.Compiled || !r.Offered || r.Usable || !strings.Contains(r.WhyNot, "go build -tags tensorrt") {
		t.Errorf("tensorrt: %+v", r)
	}
	if r := byName["cuda"]; !r.Compiled || !r.Offered || r.Usable || r.WhyNot != errNoGPU.Error() {
		t.Errorf("cuda: %+v", r)
	}
	if r := byName["cpu"]; !r.Compiled || !r.Offered || !r.Usable || r.WhyNot != "" {
		t.Errorf("cpu: %+v", r)
	}
	if r := byName["openvino"]; r.Offered || r.Compiled {
		t.Errorf("openvino: %+v", r)
	}
	if rows[0].Name != "tensorrt" || rows[len(rows)-1].Name != "cpu" {
		t.Errorf("rows are not in priority order: first %s, last %s", rows[0].Name, rows[len(rows)-1].Name)
	}
	if u := h.Unsupported(); len(u) != 1 || u[0] != "XnnpackExecutionProvider" {
		t.Errorf("Unsupported = %v", u)
	}
}
