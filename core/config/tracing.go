package config

import (
	"fmt"
	"strconv"
)

// Tracing configures OpenTelemetry tracing (see docs/tracing.md). It is off
// unless Enabled or the OTEL_* environment asks for it; the standard
// OTEL_* variables win over these keys.
type Tracing struct {
	// Enabled turns tracing on (OTEL_SDK_DISABLED=true turns it off
	// again; OTEL_TRACES_EXPORTER=otlp or an OTEL_EXPORTER_OTLP_*ENDPOINT
	// variable turns it on).
	Enabled bool `yaml:"enabled"`
	// Endpoint is the OTLP receiver's URL, such as http://collector:4318
	// (http/protobuf: /v1/traces is added) or http://collector:4317
	// (grpc); OTEL_EXPORTER_OTLP_ENDPOINT wins. Empty: the exporter's
	// default, localhost.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf (the default) or grpc;
	// OTEL_EXPORTER_OTLP_PROTOCOL wins.
	Protocol string `yaml:"protocol"`
	// Sampler is one of always_on, always_off, traceidratio,
	// parentbased_always_on (the default), parentbased_always_off,
	// parentbased_traceidratio; OTEL_TRACES_SAMPLER wins.
	Sampler string `yaml:"sampler"`
	// SamplerArg is the ratio of the traceidratio samplers, 0 to 1
	// (default 1); OTEL_TRACES_SAMPLER_ARG wins.
	SamplerArg string `yaml:"sampler_arg"`
	// ServiceName is the service.name of the spans (default: the
	// configuration's name, "svc"); OTEL_SERVICE_NAME wins.
	ServiceName string `yaml:"service_name"`
	// Spans is what a request's trace holds: steps (the default: the
	// server span and, under it, a span for each step of an inference:
	// decode, queue, inference, encode) or request (the server span alone,
	// carrying the run's svc.batch_size; about half the cost per sampled
	// request, see BENCHMARKS.md).
	Spans string `yaml:"spans"`
}

// Samplers lists the sampler names tracing.sampler takes.
var Samplers = []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// check returns the key at fault and why, or "".
func (t Tracing) check() (string, string) {
	switch t.Protocol {
	case "", "http/protobuf", "grpc":
	default:
		return "tracing.protocol", fmt.Sprintf("must be http/protobuf or grpc; got %q", t.Protocol)
	}
	if t.Sampler != "" {
		ok := false
		for _, s := range Samplers {
			ok = ok || s == t.Sampler
		}
		if !ok {
			return "tracing.sampler", fmt.Sprintf("must be one of %v; got %q", Samplers, t.Sampler)
		}
	}
	switch t.Spans {
	case "", "steps", "request":
	default:
		return "tracing.spans", fmt.Sprintf("must be steps or request; got %q", t.Spans)
	}
	if t.SamplerArg != "" {
		r, err := strconv.ParseFloat(t.SamplerArg, 64)
		if err != nil || r < 0 || r > 1 {
			return "tracing.sampler_arg", fmt.Sprintf("must be a ratio from 0 to 1; got %q", t.SamplerArg)
		}
	}
	return "", ""
}
