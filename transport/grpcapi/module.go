package grpcapi

import (
	"context"
	"os"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"google.golang.org/grpc/stats"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/access"
	"github.com/svc-dev/svc/transport/repository"
)

// Module serves the Open Inference Protocol v2 over gRPC on the "grpc"
// listener, when there is one (serve.grpc_port or --grpc-port): it
// prepares the model metadata once the model has loaded, serves on start
// and drains on stop. Without the listener it provides a nil *Server.
var Module = fx.Module("grpc",
	fx.Provide(
		newServiceFx,
		newServerFx,
		core.AsPreparer(func(s *Service) core.Preparer { return s.Prepare }),
	),
)

// ServerVersion is the svc version the server metadata reports.
type ServerVersion string

type serviceParams struct {
	fx.In
	Model   *core.Model
	Limits  config.Limits
	Runtime config.Runtime
	Log     *zap.Logger
	Version ServerVersion `optional:"true"`
	Codec   *codec.Codec  `optional:"true"`
	// Sequences keeps the state of sequences (core/seq's module).
	Sequences *seq.Store `optional:"true"`
	// Memory is the server-wide budget of request memory (core/budget).
	Memory *budget.Memory `optional:"true"`
	// Repository serves the model-repository RPCs (transport/repository's
	// module).
	Repository *repository.Handler `optional:"true"`
}

func newServiceFx(p serviceParams) (*Service, error) {
	return NewService(Options{
		Model:      p.Model,
		Version:    string(p.Version),
		Limits:     transport.LimitsOf(p.Limits, p.Runtime),
		Codec:      p.Codec,
		Sequences:  p.Sequences,
		Memory:     p.Memory,
		Repository: p.Repository,
		Logger:     p.Log.Named("grpc"),
	})
}

type serverParams struct {
	fx.In
	LC        fx.Lifecycle
	Listeners *transport.Listeners
	Service   *Service
	Serve     config.Serve
	Limits    config.Limits
	Access    config.Access
	Log       *zap.Logger
	// Stats is tracing's handler of every call (nil: tracing off).
	Stats stats.Handler `optional:"true"`
	// Payloads is the payload logger (nil: off).
	Payloads *transport.Payloads `optional:"true"`
}

func newServerFx(p serverParams) (*Server, error) {
	if !p.Listeners.Has(transport.ListenerGRPC) {
		return nil, nil
	}
	ln, err := p.Listeners.Get(transport.ListenerGRPC)
	if err != nil {
		return nil, err
	}
	keys, err := access.LoadKeys(p.Access, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	policy, err := p.Serve.AccessLogPolicy()
	if err != nil {
		return nil, err
	}
	s := NewServer(ln, p.Service, ServerOptions{
		MaxMessageBytes: int(min(int64(p.Limits.MaxBodyBytes), 1<<31-1)),
		Grace:           p.Serve.ShutdownGrace.Std(),
		Keys:            keys,
		AccessLog:       policy,
		Stats:           p.Stats,
		Payloads:        p.Payloads,
		Logger:          p.Log.Named("grpc"),
	})
	p.LC.Append(fx.Hook{
		OnStart: func(context.Context) error { s.Start(); return nil },
		OnStop:  func(ctx context.Context) error { return s.Stop(ctx) },
	})
	return s, nil
}
