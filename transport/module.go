package transport

import (
	"context"
	"net"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
)

// Module provides the Handler and a Server that listens on start and drains
// on stop.
var Module = fx.Module("transport",
	fx.Provide(newListenerFx, newHandlerFx, newServerFx),
	// Bind the port before anything else is built, so a busy port fails
	// start-up at once instead of after the model has loaded.
	fx.Invoke(func(Listener) {}),
)

// Listener is the server's bound socket.
type Listener struct{ net.Listener }

// Inherited is a socket bound by another process (a worker's supervisor);
// when present the server serves on it instead of binding its own.
type Inherited struct{ net.Listener }

type listenerParams struct {
	fx.In
	LC        fx.Lifecycle
	Config    config.Config
	Inherited *Inherited `optional:"true"`
}

func newListenerFx(p listenerParams) (Listener, error) {
	lc, c := p.LC, p.Config
	if p.Inherited != nil {
		return Listener{p.Inherited.Listener}, nil
	}
	ln, err := Listen(c.Serve.Host, c.Serve.Port)
	if err != nil {
		return Listener{}, err
	}
	// Closing an already-closed listener is harmless; this covers a start
	// that fails before the server takes the socket over.
	lc.Append(fx.StopHook(func() { _ = ln.Close() }))
	return Listener{ln}, nil
}

type handlerParams struct {
	fx.In
	Runner    core.Runner
	Metrics   core.MetricsFunc
	Config    config.Config
	Log       *zap.Logger
	Validator BodyValidator   `optional:"true"`
	Mounts    []Mounter       `group:"mounts"`
	Headers   ResponseHeaders `optional:"true"`
}

// ResponseHeaders are set on every response.
type ResponseHeaders map[string]string

func newHandlerFx(p handlerParams) (*Handler, error) {
	return NewHandler(HandlerOptions{
		Model:        p.Runner,
		Metrics:      p.Metrics,
		Validator:    p.Validator,
		Mounts:       p.Mounts,
		MaxBodyBytes: int64(p.Config.Limits.MaxBodyBytes),
		Logger:       p.Log,
		Headers:      p.Headers,
	})
}

type serverParams struct {
	fx.In
	LC       fx.Lifecycle
	Handler  *Handler
	Listener Listener
	Config   config.Config
	Log      *zap.Logger
}

func newServerFx(p serverParams) *Server {
	s := NewServer(p.Listener.Listener, p.Handler, p.Config.Serve.ShutdownGrace.Std(), p.Log)
	p.LC.Append(fx.Hook{
		OnStart: func(context.Context) error { s.Start(); return nil },
		OnStop:  func(ctx context.Context) error { return s.Stop(ctx) },
	})
	return s
}
