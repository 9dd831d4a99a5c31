package transport

import (
	"context"
	"net/http"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
)

// Module binds the named listeners, builds the router from the route group
// and runs the HTTP server on the "http" listener: it serves on start and
// drains on stop.
var Module = fx.Module("transport",
	fx.Provide(newListenersFx, newHTTPServerFx),
	// Bind the ports before anything else is built, so a busy port fails
	// start-up at once instead of after the model has loaded.
	fx.Invoke(func(*Listeners) {}),
)

// Inherited is the set of sockets a worker process got from its
// supervisor; when present, nothing is bound.
type Inherited struct{ *Listeners }

// AccessControl is the optional middleware (transport/access) that checks
// credentials and answers CORS; it runs after the access log, so rejected
// requests are logged too.
type AccessControl Middleware

// Tracing is the optional middleware (transport/tracing) that gives each
// request its server span; it runs first, so the access log sees the
// request's trace id.
type Tracing Middleware

// ResponseHeaders are set on every HTTP response.
type ResponseHeaders map[string]string

type listenersParams struct {
	fx.In
	LC        fx.Lifecycle
	Serve     config.Serve
	Inherited *Inherited `optional:"true"`
}

func newListenersFx(p listenersParams) (*Listeners, error) {
	if p.Inherited != nil {
		return p.Inherited.Listeners, nil
	}
	ls, err := BindAll(ServeBindings(p.Serve.Host, p.Serve.Port, p.Serve.GRPCPort))
	if err != nil {
		return nil, err
	}
	// Closing an already-closed listener is harmless; this covers a start
	// that fails before the servers take the sockets over.
	p.LC.Append(fx.StopHook(func() { _ = ls.Close() }))
	return ls, nil
}

type httpServerParams struct {
	fx.In
	LC        fx.Lifecycle
	Listeners *Listeners
	Routes    []Route         `group:"routes"`
	Errors    ErrorWriter     `optional:"true"`
	Headers   ResponseHeaders `optional:"true"`
	Access    AccessControl   `optional:"true"`
	Tracing   Tracing         `optional:"true"`
	Payloads  *Payloads       `optional:"true"`
	Serve     config.Serve
	Limits    config.Limits
	Log       *zap.Logger
}

// HTTPServer is the server of every HTTP route, and the routes it serves.
type HTTPServer struct {
	*Server
	Routes []Route
}

func newHTTPServerFx(p httpServerParams) (*HTTPServer, error) {
	ln, err := p.Listeners.Get(ListenerHTTP)
	if err != nil {
		return nil, err
	}
	policy, err := p.Serve.AccessLogPolicy()
	if err != nil {
		return nil, err
	}
	var h http.Handler = NewRouter(p.Routes, p.Errors)
	// The access log wraps the router so that 404s and 405s are logged too.
	mw := []Middleware{AccessLog(p.Log, p.Errors, policy), Headers(p.Headers)}
	if p.Payloads != nil && p.Payloads.HTTP != nil {
		mw = append(mw, p.Payloads.HTTP)
	}
	if p.Access != nil {
		mw = append(mw, Middleware(p.Access))
	}
	if p.Tracing != nil {
		mw = append([]Middleware{Middleware(p.Tracing)}, mw...)
	}
	h = Chain(h, mw...)
	s := NewServer(ln, h, p.Serve.ShutdownGrace.Std(), p.Log)
	s.SetReadTimeout(p.Limits.ReadTimeout.Std())
	p.LC.Append(fx.Hook{
		OnStart: func(context.Context) error { s.Start(); return nil },
		OnStop:  func(ctx context.Context) error { return s.Stop(ctx) },
	})
	return &HTTPServer{Server: s, Routes: p.Routes}, nil
}
