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
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
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
	// Spans is SpansSteps (a server span and a child span for each step
	// of an inference) or SpansRequest (the server span alone).
	Spans string
}

// The values of tracing.spans.
const (
	SpansSteps   = "steps"
	SpansRequest = "request"
)

// Resolve reads cfg under the environment (lookup is os.LookupEnv): the
// OTEL_* variables win over svc.yml.
func Resolve(cfg config.Tracing, lookup func(string) (string, bool)) (Settings, error) {
	env := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	s := Settings{Enabled: cfg.Enabled, ServiceName: cfg.ServiceName, Spans: cfg.Spans}
	if s.Spans == "" {
		s.Spans = SpansSteps
	}
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
	// steps: the steps of an inference get spans of their own.
	steps bool
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
	return newTracer(ctx, s, exp, attrs...)
}

// newTracer is New with the exporter given.
func newTracer(ctx context.Context, s Settings, exp sdktrace.SpanExporter, attrs ...attribute.KeyValue) (*Tracer, error) {
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
		steps:    s.Spans != SpansRequest,
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
// trace of a traceparent header, through the official W3C propagator),
// with the HTTP semantic conventions' attributes, and the request's
// context a core.RequestTrace and the trace id for the access log.
//
// It is svc's own rather than otelhttp's handler: otelhttp's costs a
// sampled request more than twice as much CPU (it measures the bodies and
// keeps metrics beside the span, wraps the body and the writer, and
// allocates its attributes on every request, sampled or not), which the
// tracing benchmark in this package shows.
func (t *Tracer) Middleware() transport.Middleware {
	return func(next http.Handler) http.Handler {
		return &httpTracing{t: t, next: next}
	}
}

type httpTracing struct {
	t    *Tracer
	next http.Handler
}

// The header names the W3C propagator asks for, in the canonical form
// http.Header keeps them in.
var (
	traceparentKey = http.CanonicalHeaderKey("traceparent")
	tracestateKey  = http.CanonicalHeaderKey("tracestate")
)

// headerCarrier hands the propagator a request's headers without
// canonicalising the names it asks for on every request.
type headerCarrier http.Header

func (c headerCarrier) Get(key string) string {
	var v []string
	switch key {
	case "traceparent":
		v = c[traceparentKey]
	case "tracestate":
		v = c[tracestateKey]
	default:
		return http.Header(c).Get(key)
	}
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (c headerCarrier) Set(key, value string) { http.Header(c).Set(key, value) }
func (c headerCarrier) Keys() []string        { return propagation.HeaderCarrier(c).Keys() }

// serverSpanName is the server span's name until the span is known to be
// sampled; a sampled one is then named "METHOD /path" (spanName).
const serverSpanName = "HTTP"

// The span kinds, as options made once.
var (
	serverKind   = trace.WithSpanKind(trace.SpanKindServer)
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
)

func (h *httpTracing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := h.t.prop.Extract(r.Context(), headerCarrier(r.Header))
	// The sampler decides without the span's attributes (the SDK's
	// samplers read none); an unsampled request builds none of them.
	ctx, span := h.t.tracer.Start(ctx, serverSpanName, serverKind)
	if !span.IsRecording() {
		// Not sampled: nothing is exported, and nothing below needs the
		// span (svc calls no one it could pass the trace on to), so the
		// request goes on as it came. Its access-log line still carries
		// the caller's trace id, from the traceparent header.
		h.next.ServeHTTP(w, r)
		return
	}
	sc := span.SpanContext()
	span.SetName(spanName(r))
	q := &httpRequest{ResponseWriter: w}
	ctx = transport.WithTraceID(ctx, transport.TraceID(sc.TraceID()))
	q.steps.ctx, q.steps.tracer, q.steps.span, q.steps.each, q.steps.deferRows = ctx, h.t.tracer, span, h.t.steps, true
	ctx = core.WithRequestTrace(ctx, &q.steps)
	defer func() {
		status := q.status
		if status == 0 {
			status = http.StatusOK
		}
		if p := recover(); p != nil {
			// The access log, inside, answers panics; one that reaches
			// here is http.ErrAbortHandler, which net/http handles.
			status = http.StatusInternalServerError
			defer panic(p)
		}
		// The attributes go in at the end, all at once: the span grows its
		// list of them once.
		n := requestAttrs(&q.attrs, r)
		q.attrs[n] = semconv.HTTPResponseStatusCode(status)
		n++
		if rows := q.steps.rows.Load(); rows > 0 {
			q.attrs[n] = attribute.Int(BatchSizeKey, int(rows))
			n++
		}
		if status >= 500 {
			q.attrs[n] = semconv.ErrorTypeKey.String(strconv.Itoa(status))
			n++
			span.SetStatus(codes.Error, "")
		}
		span.SetAttributes(q.attrs[:n]...)
		span.End()
	}()
	h.next.ServeHTTP(q, r.WithContext(ctx))
}

// httpRequest is a sampled request's state, in one allocation: the writer
// that remembers the answer's status, room for the span's attributes,
// and the steps.
type httpRequest struct {
	http.ResponseWriter
	status int
	attrs  [6]attribute.KeyValue
	steps  steps
}

func (q *httpRequest) WriteHeader(code int) {
	if q.status == 0 {
		q.status = code
	}
	q.ResponseWriter.WriteHeader(code)
}

func (q *httpRequest) Write(b []byte) (int, error) {
	if q.status == 0 {
		q.status = http.StatusOK
	}
	return q.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (q *httpRequest) Unwrap() http.ResponseWriter { return q.ResponseWriter }

// requestAttrs puts a request's semantic-convention attributes into a and
// returns how many: those the HTTP server span's conventions require
// (http.request.method, url.scheme, url.path; http.response.status_code
// and error.type are set at the end). The recommended ones (the peer's
// address and port, the user agent, the protocol version, ...) are left
// out: every attribute is copied into the span, converted and encoded
// again by the exporter, and on the tiny model they would cost more than
// the step spans do (docs/tracing.md, Cost).
func requestAttrs(a *[6]attribute.KeyValue, r *http.Request) int {
	scheme := semconv.URLScheme("http")
	if r.TLS != nil {
		scheme = semconv.URLScheme("https")
	}
	p := r.URL.Path
	if len(p) > 256 {
		p = p[:256]
	}
	a[0], a[1], a[2] = methodAttr(r.Method), scheme, semconv.URLPath(p)
	return 3
}

// methodAttr is http.request.method: the method if it is a known one,
// else _OTHER (the conventions' way of bounding its values).
func methodAttr(m string) attribute.KeyValue {
	switch m {
	case http.MethodGet:
		return semconv.HTTPRequestMethodGet
	case http.MethodPost:
		return semconv.HTTPRequestMethodPost
	case http.MethodPut:
		return semconv.HTTPRequestMethodPut
	case http.MethodDelete:
		return semconv.HTTPRequestMethodDelete
	case http.MethodHead:
		return semconv.HTTPRequestMethodHead
	case http.MethodOptions:
		return semconv.HTTPRequestMethodOptions
	case http.MethodPatch:
		return semconv.HTTPRequestMethodPatch
	case http.MethodConnect:
		return semconv.HTTPRequestMethodConnect
	case http.MethodTrace:
		return semconv.HTTPRequestMethodTrace
	}
	return semconv.HTTPRequestMethodOther
}

// spanName is "METHOD /path", the path cut short.
func spanName(r *http.Request) string {
	p := r.URL.Path
	if len(p) > 128 {
		p = p[:128]
	}
	return r.Method + " " + p
}

// scope adds to ctx, which holds a gRPC call's server span, the call's
// steps and its trace id.
func (t *Tracer) scope(ctx context.Context) context.Context {
	span := trace.SpanFromContext(ctx)
	sc := span.SpanContext()
	// The rpc line's trace id: the span's when it is sampled, else the
	// caller's (the unsampled span goes on its trace); an unsampled call
	// with no caller's trace has none to log, as over HTTP.
	if sc.HasTraceID() && (span.IsRecording() || incomingTraceparent(ctx)) {
		ctx = transport.WithTraceID(ctx, transport.TraceID(sc.TraceID()))
	}
	if span.IsRecording() {
		ctx = core.WithRequestTrace(ctx, &steps{ctx: ctx, tracer: t.tracer, span: span, each: t.steps})
	}
	return ctx
}

// incomingTraceparent reports whether a gRPC call's metadata carries a
// well-formed W3C traceparent.
func incomingTraceparent(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("traceparent") {
		if transport.TraceparentID(v) != "" {
			return true
		}
	}
	return false
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

// steps turns a request's steps into child spans of its server span
// (tracing.spans: steps), or, with each off (tracing.spans: request), only
// puts the run's batch size on the server span.
type steps struct {
	ctx    context.Context
	tracer trace.Tracer
	span   trace.Span
	each   bool
	// rows is the run's batch size when each is off and the server span
	// is the middleware's, which sets it when it ends the span.
	rows atomic.Int64
	// deferRows: the middleware sets rows on the span; else Step does.
	deferRows bool
}

func (s *steps) Step(st core.Step, start, end time.Time, rows int) {
	if !s.each {
		switch {
		case st != core.StepInfer:
		case s.deferRows:
			s.rows.Store(int64(rows))
		default:
			s.span.SetAttributes(attribute.Int(BatchSizeKey, rows))
		}
		return
	}
	if st == core.StepInfer {
		_, span := s.tracer.Start(s.ctx, stepNames[st], trace.WithTimestamp(start), internalKind,
			trace.WithAttributes(attribute.Int(BatchSizeKey, rows)))
		span.End(trace.WithTimestamp(end))
		return
	}
	_, span := s.tracer.Start(s.ctx, stepNames[st], trace.WithTimestamp(start), internalKind)
	span.End(trace.WithTimestamp(end))
}
