package tracing

import (
	"testing"

	"github.com/svc-dev/svc/core/config"
)

// TestResolve: the OTEL_* variables win over svc.yml's tracing section,
// and switch tracing on or off.
func TestResolve(t *testing.T) {
	yml := config.Tracing{Enabled: true, Endpoint: "http://yml:4318", Protocol: "grpc", Sampler: "always_off", ServiceName: "from-yml"}
	cases := []struct {
		name     string
		cfg      config.Tracing
		env      map[string]string
		enabled  bool
		protocol string
		endpoint string
		sampler  bool // svc.yml's sampler is used
		service  string
		err      bool
	}{
		{name: "off by default", protocol: "http/protobuf", service: "svc"},
		{name: "svc.yml", cfg: yml, enabled: true, protocol: "grpc", endpoint: "http://yml:4318", sampler: true, service: "from-yml"},
		{name: "endpoint variable turns on and wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"}, enabled: true, protocol: "http/protobuf", service: "svc"},
		{name: "variables win over svc.yml", cfg: yml, env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:4318/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_TRACES_SAMPLER": "always_on"},
			enabled: true, protocol: "http/protobuf", service: "from-yml"},
		{name: "exporter otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, enabled: true, protocol: "http/protobuf", service: "svc"},
		{name: "exporter none", cfg: yml, env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, protocol: "grpc", endpoint: "http://yml:4318", sampler: true, service: "from-yml"},
		{name: "sdk disabled", cfg: yml, env: map[string]string{"OTEL_SDK_DISABLED": "true"}, protocol: "grpc", endpoint: "http://yml:4318", sampler: true, service: "from-yml"},
		{name: "unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: true},
		{name: "unknown protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(tc.cfg, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.err {
				if err == nil {
					t.Fatalf("no error; got %+v", s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Enabled != tc.enabled || s.Protocol != tc.protocol || s.Endpoint != tc.endpoint || (s.Sampler != nil) != tc.sampler || s.ServiceName != tc.service {
				t.Fatalf("got %+v", s)
			}
		})
	}
}

// TestSampler: every sampler name builds; a bad name or ratio is refused.
func TestSampler(t *testing.T) {
	for _, name := range config.Samplers {
		if _, err := Sampler(name, "0.5"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, tc := range []struct{ name, arg string }{{"sometimes", ""}, {"traceidratio", "2"}, {"traceidratio", "x"}} {
		if _, err := Sampler(tc.name, tc.arg); err == nil {
			t.Errorf("%s %s: no error", tc.name, tc.arg)
		}
	}
}
