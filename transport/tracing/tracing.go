// Package tracing is svc's OpenTelemetry tracing: a server span for every
// HTTP request and gRPC call (W3C traceparent and tracestate carried in
// and out, the semantic-convention attributes of the official
// instrumentation), child spans for each step of an inference (decoding,
// the queue, the run with its batch size, encoding: core.RequestTrace),
// and an OTLP exporter over HTTP or gRPC configured by the standard OTEL_*
// variables and svc.yml's tracing section.
//
// Off, nothing of it is built: no middleware, no stats handler, no
// context values. It is the one package that imports OpenTelemetry.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// DefaultServiceName is the service.name of the spans unless
// tracing.service_name or OTEL_SERVICE_NAME says otherwise.
const DefaultServiceName = "svc"

// Settings is tracing's configuration once svc.yml and the environment
// are both read.
type Settings struct {
	// Enabled: tracing is on.
	Enabled bool
	// Protocol is "http/protobuf" or "grpc".
	Protocol string
	// Endpoint is svc.yml's endpoint when no OTEL_ variable names one ("":
	// the exporter reads the environment, or takes its default).
	Endpoint string
	// Sampler is svc.yml's sampler when OTEL_TRACES_SAMPLER is unset (nil:
	// the SDK reads the environment, or takes parentbased_always_on).
	Sampler sdktrace.Sampler
	// ServiceName is svc.yml's service name (the environment's
	// OTEL_SERVICE_NAME wins over it in the resource).
	ServiceName string
}

// Resolve reads cfg under the environment (lookup is os.LookupEnv): the
// OTEL_* variables win over svc.yml.
func Resolve(cfg config.Tracing, lookup func(string) (string, bool)) (Settings, error) {
	env := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	s := Settings{Enabled: cfg.Enabled, ServiceName: cfg.ServiceName}
	if env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		s.Enabled = true
	} else {
		s.Endpoint = cfg.Endpoint
	}
	switch strings.ToLower(env("OTEL_TRACES_EXPORTER")) {
	case "":
	case "otlp":
		s.Enabled = true
	case "none":
		s.Enabled = false
	default:
		return s, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: svc exports traces by otlp only (or none)", env("OTEL_TRACES_EXPORTER"))
	}
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		s.Enabled = false
	}
	s.Protocol = cfg.Protocol
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if v := env(k); v != "" {
			s.Protocol = v
		}
	}
	switch s.Protocol {
	case "":
		s.Protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	default:
		return s, fmt.Errorf("OTLP protocol %q: svc exports over http/protobuf or grpc", s.Protocol)
	}
	if env("OTEL_TRACES_SAMPLER") == "" && cfg.Sampler != "" {
		sampler, err := Sampler(cfg.Sampler, cfg.SamplerArg)
		if err != nil {
			return s, err
		}
		s.Sampler = sampler
	}
	if s.ServiceName == "" {
		s.ServiceName = DefaultServiceName
	}
	return s, nil
}

// Sampler is the sampler of the name and argument OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG take.
func Sampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("tracing.sampler_arg %q: expected a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_always_on", "":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("tracing.sampler %q: expected one of %v", name, config.Samplers)
}

// Tracer is tracing switched on: the provider, its exporter and the
// propagator of W3C trace context.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

// New starts tracing as s says, the spans' resource carrying attrs too
// (such as the worker's id); nil when s is not Enabled.
func New(ctx context.Context, s Settings, attrs ...attribute.KeyValue) (*Tracer, error) {
	if !s.Enabled {
		return nil, nil
	}
	exp, err := exporter(ctx, s)
	if err != nil {
		return nil, err
	}
	attrs = append([]attribute.KeyValue{attribute.String("service.name", s.ServiceName)}, attrs...)
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if s.Sampler != nil {
		opts = append(opts, sdktrace.WithSampler(s.Sampler))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracer{
		provider: tp,
		tracer:   tp.Tracer("github.com/svc-dev/svc/transport/tracing"),
		prop:     propagation.TraceContext{},
	}, nil
}

// exporter is the OTLP exporter of s's protocol.
func exporter(ctx context.Context, s Settings) (*otlptrace.Exporter, error) {
	if s.Protocol == "grpc" {
		var opts []otlptracegrpc.Option
		if s.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(s.Endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if s.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(s.Endpoint, "/")+"/v1/traces"))
	}
	return otlptracehttp.New(ctx, opts...)
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// Middleware gives each HTTP request its server span (continuing the
// trace of a traceparent header), and the request's context a
// core.RequestTrace and the trace id for the access log.
func (t *Tracer) Middleware() transport.Middleware {
	return func(next http.Handler) http.Handler {
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(t.scope(r.Context())))
		})
		return otelhttp.NewHandler(inner, "",
			otelhttp.WithTracerProvider(t.provider),
			otelhttp.WithPropagators(t.prop),
			otelhttp.WithMeterProvider(noop.NewMeterProvider()),
			otelhttp.WithSpanNameFormatter(spanName))
	}
}

// spanName is "METHOD /path", the path cut short.
func spanName(_ string, r *http.Request) string {
	p := r.URL.Path
	if len(p) > 128 {
		p = p[:128]
	}
	return r.Method + " " + p
}

// scope adds to ctx, which holds the request's server span, the request's
// steps and its trace id.
func (t *Tracer) scope(ctx context.Context) context.Context {
	span := trace.SpanFromContext(ctx)
	sc := span.SpanContext()
	if sc.HasTraceID() {
		ctx = transport.WithTraceID(ctx, transport.TraceID(sc.TraceID()))
	}
	if span.IsRecording() {
		ctx = core.WithRequestTrace(ctx, &steps{ctx: ctx, tracer: t.tracer})
	}
	return ctx
}

// StatsHandler gives each gRPC call its server span, as Middleware does
// for HTTP.
func (t *Tracer) StatsHandler() stats.Handler {
	return &grpcStats{Handler: otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.provider),
		otelgrpc.WithPropagators(t.prop),
		otelgrpc.WithMeterProvider(noop.NewMeterProvider())), t: t}
}

// grpcStats is otelgrpc's handler, whose call contexts also get the
// call's steps and trace id.
type grpcStats struct {
	stats.Handler
	t *Tracer
}

func (g *grpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return g.t.scope(g.Handler.TagRPC(ctx, info))
}

// The names of the steps' spans.
var stepNames = [...]string{
	core.StepDecode: "decode",
	core.StepQueue:  "queue",
	core.StepInfer:  "inference",
	core.StepEncode: "encode",
}

// BatchSizeKey is the inference span's attribute holding the rows of the
// run it was part of (other requests' merged in).
const BatchSizeKey = "svc.batch_size"

// steps turns a request's steps into child spans of its server span.
type steps struct {
	ctx    context.Context
	tracer trace.Tracer
}

func (s *steps) Step(st core.Step, start, end time.Time, rows int) {
	_, span := s.tracer.Start(s.ctx, stepNames[st], trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal))
	if st == core.StepInfer {
		span.SetAttributes(attribute.Int(BatchSizeKey, rows))
	}
	span.End(trace.WithTimestamp(end))
}
