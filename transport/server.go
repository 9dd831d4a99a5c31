package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Server runs the HTTP server on a listener and drains it on Stop.
type Server struct {
	srv   *http.Server
	ln    net.Listener
	log   *zap.Logger
	grace time.Duration
	done  chan error
}

// NewServer wraps handler; Start begins serving on ln.
func NewServer(ln net.Listener, handler http.Handler, grace time.Duration, log *zap.Logger) *Server {
	if log == nil {
		log = zap.NewNop()
	}
	return &Server{
		ln:    ln,
		log:   log,
		grace: grace,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          zap.NewStdLog(log.Named("http")),
		},
		done: make(chan error, 1),
	}
}

// SetReadTimeout bounds reading one request, headers and body (0 = no
// bound on the body; headers keep their 10 s bound). A client that sends
// too slowly is answered 408 or disconnected. Call it before Start.
func (s *Server) SetReadTimeout(d time.Duration) {
	if d <= 0 {
		return
	}
	s.srv.ReadTimeout = d
	s.srv.ReadHeaderTimeout = min(s.srv.ReadHeaderTimeout, d)
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Start serves in a goroutine owned by the Server; Stop ends it.
func (s *Server) Start() {
	go func() {
		err := s.srv.Serve(s.ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
}

// Stop stops accepting connections and waits for in-flight requests, up to
// the grace period or ctx, whichever ends first.
func (s *Server) Stop(ctx context.Context) error {
	if s.grace > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.grace)
		defer cancel()
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.log.Warn("grace period ended with requests in flight; closing them", zap.Error(err))
		_ = s.srv.Close()
	}
	if serveErr := <-s.done; serveErr != nil {
		return fmt.Errorf("http server: %w", serveErr)
	}
	return err
}
