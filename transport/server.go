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
	// dl is ln when it is TCP; drain says whether Stop drains it.
	dl    *DrainListener
	drain bool
}

// NewServer wraps handler; Start begins serving on ln.
func NewServer(ln net.Listener, handler http.Handler, grace time.Duration, log *zap.Logger) *Server {
	if log == nil {
		log = zap.NewNop()
	}
	var dl *DrainListener
	if tcp, ok := ln.(*net.TCPListener); ok {
		dl = NewDrainListener(tcp, log)
		ln = dl
	}
	return &Server{
		dl:    dl,
		drain: true,
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
		if s.dl != nil {
			// Nothing accepts any more: a Drain must not wait for it.
			_ = s.dl.Close()
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
}

// SetDrainOnStop says whether Stop drains the listening socket (the
// default) before closing it. A worker that stops alone, while the others
// keep accepting on the socket they share, does not: the others take what
// is queued. Call it before Stop.
func (s *Server) SetDrainOnStop(drain bool) { s.drain = drain }

// Stop stops accepting connections and waits for in-flight requests, up to
// the grace period or ctx, whichever ends first. Connections the kernel had
// already accepted are answered first, each with Connection: close (see
// DrainListener), so that closing the socket resets none.
func (s *Server) Stop(ctx context.Context) error {
	if s.grace > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.grace)
		defer cancel()
	}
	s.srv.SetKeepAlivesEnabled(false)
	if s.drain && s.dl != nil {
		if err := s.dl.Drain(ctx); err != nil {
			s.log.Warn("grace period ended while draining the listener's queue", zap.Error(err))
		}
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
