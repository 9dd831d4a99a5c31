package tracing

import (
	"context"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"google.golang.org/grpc/stats"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/transport"
)

// Module starts tracing when svc.yml or the OTEL_* environment asks for
// it, and hands the HTTP server its middleware and the gRPC server its
// stats handler; off, it provides nothing but nils. On stop, the spans
// still buffered are exported.
var Module = fx.Module("tracing",
	fx.Provide(
		newTracerFx,
		func(t *Tracer) transport.Tracing {
			if t == nil {
				return nil
			}
			return transport.Tracing(t.Middleware())
		},
		func(t *Tracer) stats.Handler {
			if t == nil {
				return nil
			}
			return t.StatsHandler()
		},
	),
)

type tracerParams struct {
	fx.In
	LC      fx.Lifecycle
	Tracing config.Tracing
	Log     *zap.Logger
	// Headers carry the worker's id under --workers.
	Headers transport.ResponseHeaders `optional:"true"`
}

func newTracerFx(p tracerParams) (*Tracer, error) {
	s, err := Resolve(p.Tracing, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	var attrs []attribute.KeyValue
	if id, ok := p.Headers[workers.WorkerIDHeader]; ok {
		attrs = append(attrs, attribute.String("svc.worker", id))
	}
	t, err := New(context.Background(), s, attrs...)
	if err != nil || t == nil {
		return nil, err
	}
	// The SDK reports what goes wrong beside the request, such as an
	// export the receiver refused or never took, to its global handler,
	// which otherwise prints a plain-text line into svc's log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		p.Log.Warn("tracing failed", zap.Error(err))
	}))
	p.Log.Info("tracing on", zap.String("protocol", s.Protocol), zap.String("service_name", s.ServiceName))
	p.LC.Append(fx.StopHook(t.Shutdown))
	return t, nil
}
