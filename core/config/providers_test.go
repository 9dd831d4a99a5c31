package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// defaultSections is every declared section with its defaults.
var defaultSections = map[string]map[string]any{
	"tensorrt": {"fp16": false, "int8": false, "engine_cache": ""},
	"openvino": {"device_type": ""},
}

func TestProviderSections(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantID   int
		want     map[string]map[string]any // sections; nil = defaultSections
		wantErrs []string                  // substrings of the error; none = loads
	}{
		{name: "no providers section: the defaults", body: "name: x\n"},
		{name: "device_id only", body: "providers:\n  device_id: 2\n", wantID: 2},
		{name: "an empty providers section", body: "providers:\n"},
		{name: "an empty provider section", body: "providers:\n  tensorrt:\n  openvino: {device_type: GPU}\n", want: map[string]map[string]any{
			"tensorrt": defaultSections["tensorrt"], "openvino": {"device_type": "GPU"},
		}},
		{name: "part of a section: the rest stays default", body: "providers:\n  tensorrt:\n    int8: true\n", want: map[string]map[string]any{
			"tensorrt": {"fp16": false, "int8": true, "engine_cache": ""}, "openvino": defaultSections["openvino"],
		}},
		{
			name:     "an unknown key in a section",
			body:     "providers:\n  device_id: 1\n  tensorrt:\n    fp16: true\n    fp17: true\n",
			wantErrs: []string{"svc.yml: unmarshal errors:", "line 5: field fp17 not found in type tensorrt.Settings"},
		},
		{
			name:     "an unknown key in a flow section",
			body:     "serve:\n  port: 80\nproviders: {openvino: {device: GPU}}\n",
			wantErrs: []string{"line 3: field device not found in type openvino.Settings"},
		},
		{
			name:     "an unknown provider",
			body:     "providers:\n  device_id: 0\n  tpu:\n    cores: 8\n",
			wantErrs: []string{"line 3: providers.tpu is not a provider; the providers are cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu"},
		},
		{
			name:     "a provider without settings",
			body:     "providers:\n  cuda: {device_id: 1}\n",
			wantErrs: []string{"line 2: providers.cuda: the cuda provider has no settings; the providers with settings are tensorrt, openvino"},
		},
		{
			name:     "a value of the wrong type",
			body:     "providers:\n  tensorrt:\n    fp16: maybe\n",
			wantErrs: []string{"line 3: cannot unmarshal !!str `maybe` into bool"},
		},
		{
			name:     "a device_id of the wrong type",
			body:     "providers:\n  device_id: first\n",
			wantErrs: []string{"line 2: cannot unmarshal !!str `first` into int"},
		},
		{
			name:     "a section twice",
			body:     "providers:\n  openvino: {device_type: GPU}\n  openvino: {device_type: CPU}\n",
			wantErrs: []string{`line 3: mapping key "openvino" already defined at line 2`},
		},
		{
			name:     "providers is not a mapping",
			body:     "providers: [cuda]\n",
			wantErrs: []string{"line 1: cannot unmarshal !!seq into config.Providers"},
		},
		{
			name:     "every mistake at once",
			body:     "providers:\n  tpu: {}\n  tensorrt: {fp32: true}\n  openvino: {device_typ: GPU}\n",
			wantErrs: []string{"line 2: providers.tpu", "line 3: field fp32", "line 4: field device_typ"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(write(t, tt.body), true)
			if len(tt.wantErrs) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErrs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				want = defaultSections
			}
			if got := sections(t, c.Providers.Settings); !reflect.DeepEqual(got, want) {
				t.Errorf("sections = %v, want %v", got, want)
			}
			if c.Providers.DeviceID != tt.wantID {
				t.Errorf("device_id = %d, want %d", c.Providers.DeviceID, tt.wantID)
			}
		})
	}
}

func TestDefaultProviderSections(t *testing.T) {
	d := Default()
	if got := sections(t, d.Providers.Settings); !reflect.DeepEqual(got, defaultSections) {
		t.Errorf("Default() sections = %v, want %v", got, defaultSections)
	}
	// Each Default has its own sections, and decoding into a copy of a
	// Config leaves the original's alone.
	c := d
	if err := yaml.Unmarshal([]byte("providers:\n  tensorrt: {fp16: true}\n"), &c); err != nil {
		t.Fatal(err)
	}
	if got := sections(t, c.Providers.Settings)["tensorrt"]["fp16"]; got != true {
		t.Errorf("decoded fp16 = %v", got)
	}
	if got := sections(t, d.Providers.Settings)["tensorrt"]["fp16"]; got != false {
		t.Errorf("decoding into a copy changed the original: fp16 = %v", got)
	}
	if got := sections(t, Default().Providers.Settings)["tensorrt"]["fp16"]; got != false {
		t.Errorf("decoding changed the next Default(): fp16 = %v", got)
	}
}

// The starter's providers part comes from the declared providers.
func TestStarterProviders(t *testing.T) {
	s := Starter()
	for _, want := range []string{
		`  provider: ""           # cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu; empty = automatic` + "\n",
		"providers:\n  device_id: 0           # accelerator index (cuda, rocm, directml, tensorrt)\n  tensorrt:\n    fp16: false\n",
		"  openvino:\n    device_type: \"\"      # CPU, GPU, NPU or AUTO; empty = OpenVINO's default\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the starter lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "@") {
		t.Errorf("the starter has a placeholder left:\n%s", s)
	}
}

type strictInner struct {
	A int `yaml:"a"`
}

type strictEmbedded struct {
	E int `yaml:"e"`
}

type strictAll struct {
	Name           string                 `yaml:"name"`
	Inner          strictInner            `yaml:"inner"`
	Ptr            *strictInner           `yaml:"ptr"`
	List           []strictInner          `yaml:"list"`
	Map            map[string]strictInner `yaml:"map"`
	strictEmbedded `yaml:",inline"`
	Wait           Duration `yaml:"wait"`
	Plain          int
	Skip           int `yaml:"-"`
	Any            any `yaml:"any"`
}

type strictCatchAll struct {
	Name string         `yaml:"name"`
	Rest map[string]int `yaml:",inline"`
}

// unknownFields finds exactly the keys yaml's own strict decoder refuses,
// at the same lines and in the same words.
func TestUnknownFields(t *testing.T) {
	tests := []struct {
		name string
		into any
		body string
		want []string
	}{
		{"every field", &strictAll{}, "name: x\ninner: {a: 1}\nptr: {a: 2}\nlist: [{a: 3}]\nmap: {k: {a: 4}}\ne: 5\nwait: 2s\nplain: 6\nany: {whatever: 1}\n", nil},
		{"at the top", &strictAll{}, "name: x\nnmae: y\n", []string{"line 2: field nmae not found in type config.strictAll"}},
		{"a skipped field", &strictAll{}, "skip: 1\n", []string{"line 1: field skip not found in type config.strictAll"}},
		{"in a struct", &strictAll{}, "inner:\n  a: 1\n  b: 2\n", []string{"line 3: field b not found in type config.strictInner"}},
		{"behind a pointer", &strictAll{}, "ptr:\n  b: 2\n", []string{"line 2: field b not found in type config.strictInner"}},
		{"in a list", &strictAll{}, "list:\n  - a: 1\n  - b: 2\n", []string{"line 3: field b not found in type config.strictInner"}},
		{"in a map", &strictAll{}, "map:\n  k:\n    b: 2\n", []string{"line 3: field b not found in type config.strictInner"}},
		{"through an alias", &strictAll{}, "inner: &x {b: 1}\nptr: *x\n", []string{"line 1: field b not found in type config.strictInner", "line 1: field b not found in type config.strictInner"}},
		{"several", &strictAll{}, "x: 1\ninner: {y: 2}\n", []string{"line 1: field x not found in type config.strictAll", "line 2: field y not found in type config.strictInner"}},
		{"an inline map takes any key", &strictCatchAll{}, "name: x\nother: 1\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.body), &doc); err != nil {
				t.Fatal(err)
			}
			got := unknownFields(doc.Content[0], reflect.TypeOf(tt.into))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("unknownFields = %q, want %q", got, tt.want)
			}
			// yaml's strict decoder agrees.
			dec := yaml.NewDecoder(bytes.NewReader([]byte(tt.body)))
			dec.KnownFields(true)
			err := dec.Decode(tt.into)
			var te *yaml.TypeError
			switch {
			case errors.As(err, &te):
				if !reflect.DeepEqual(te.Errors, tt.want) {
					t.Errorf("yaml's strict decoder says %q, unknownFields %q", te.Errors, got)
				}
			case err != nil:
				t.Fatal(err)
			case tt.want != nil:
				t.Errorf("yaml's strict decoder accepts it; unknownFields says %q", got)
			}
		})
	}
}
