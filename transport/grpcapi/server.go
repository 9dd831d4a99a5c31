package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/access"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// MaxMessageBytes is the largest request message accepted (0: gRPC's
	// default of 4 MiB); a larger one is ResourceExhausted.
	MaxMessageBytes int
	// Grace bounds how long in-flight calls may finish on Stop (0: until
	// Stop's context ends).
	Grace time.Duration
	// Keys, when set, are required as "authorization: Bearer <key>"
	// metadata by every call but the open ones (see openMethods).
	Keys *access.Keys
	// AccessLog says which calls get an "rpc" log line (serve.access_log;
	// the zero value logs every call).
	AccessLog config.AccessLog
	// Stats, when set, sees every call (tracing's server spans).
	Stats stats.Handler
	// Payloads, when set, logs what ModelInfer calls and ModelStreamInfer's
	// messages carry (the payload logger; it runs after the key's check).
	Payloads *transport.Payloads
	Logger   *zap.Logger
}

// loggedStream tells the payload logger each message of a stream, as it is
// taken and once it is sent.
type loggedStream struct {
	grpc.ServerStream
	m transport.GRPCMessages
}

func (s *loggedStream) RecvMsg(msg any) error {
	err := s.ServerStream.RecvMsg(msg)
	if err == nil {
		s.m.Received(msg)
	}
	return err
}

func (s *loggedStream) SendMsg(msg any) error {
	err := s.ServerStream.SendMsg(msg)
	if err == nil {
		s.m.Sent(msg)
	}
	return err
}

// Server runs the gRPC server on a listener: the inference service, the
// health service and reflection.
type Server struct {
	srv      *grpc.Server
	ln       net.Listener
	dl       *transport.DrainListener // ln when TCP
	drain    bool
	log      *zap.Logger
	grace    time.Duration
	done     chan error
	stopping chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// openMethods need no key, like the HTTP health and metadata endpoints:
// the health service, reflection, and the protocol's liveness, readiness
// and metadata.
var openMethods = []string{
	"/grpc.health.v1.Health/",
	"/grpc.reflection.",
	"/" + ServiceName + "/ServerLive",
	"/" + ServiceName + "/ServerReady",
	"/" + ServiceName + "/ModelReady",
	"/" + ServiceName + "/ServerMetadata",
	"/" + ServiceName + "/ModelMetadata",
}

// IsOpen reports whether the full method name needs no key.
func IsOpen(method string) bool {
	for _, p := range openMethods {
		if method == p || (strings.HasSuffix(p, "/") || strings.HasSuffix(p, ".")) && strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// checkKey returns nil when the call may go on, else Unauthenticated.
func checkKey(ctx context.Context, keys *access.Keys, method string) error {
	if keys == nil || IsOpen(method) {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	auth := md.Get("authorization")
	if len(auth) == 0 {
		return status.Error(codes.Unauthenticated, access.MsgMissing)
	}
	const scheme = "bearer "
	h := auth[0]
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return status.Error(codes.Unauthenticated, access.MsgMissing)
	}
	if tok := strings.TrimSpace(h[len(scheme):]); tok == "" || !keys.Valid(tok) {
		return status.Error(codes.Unauthenticated, access.MsgInvalid)
	}
	return nil
}

// windowBytes is the HTTP/2 flow-control window of a stream and of a
// connection, on both sides.
const windowBytes = 8 << 20

// NewServer builds the server of svc on ln.
func NewServer(ln net.Listener, svc *Service, o ServerOptions) *Server {
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	s := &Server{ln: ln, log: log, grace: o.Grace, done: make(chan error, 1), stopping: make(chan struct{}), drain: true}
	svc.stopping = s.stopping
	if tcp, ok := ln.(*net.TCPListener); ok {
		s.dl = transport.NewDrainListener(tcp, log)
		s.ln = s.dl
	}
	calls := newCallLog(log, o.AccessLog)
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(calls.unary, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := checkKey(ctx, o.Keys, info.FullMethod); err != nil {
				return nil, err
			}
			if o.Payloads != nil && o.Payloads.GRPC != nil {
				return o.Payloads.GRPC(ctx, req, info.FullMethod, h)
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(calls.stream, func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := checkKey(ss.Context(), o.Keys, info.FullMethod); err != nil {
				return err
			}
			if o.Payloads != nil && o.Payloads.GRPCStream != nil {
				if m := o.Payloads.GRPCStream(ss.Context(), info.FullMethod); m != nil {
					ss = &loggedStream{ServerStream: ss, m: m}
				}
			}
			return h(srv, ss)
		}),
	}
	if o.MaxMessageBytes > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(o.MaxMessageBytes))
	}
	if o.Stats != nil {
		opts = append(opts, grpc.StatsHandler(o.Stats))
	}
	// Tensors are large: flow-control windows of HTTP/2's default 64 KiB
	// make a megabyte request take many round trips.
	opts = append(opts, grpc.InitialWindowSize(windowBytes), grpc.InitialConnWindowSize(windowBytes))
	s.srv = grpc.NewServer(opts...)
	inference.RegisterGRPCInferenceServiceServer(s.srv, svc)
	grpc_health_v1.RegisterHealthServer(s.srv, &health{svc: svc, stopping: s.stopping})
	reflection.Register(s.srv)
	return s
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Start serves in a goroutine owned by the Server; Stop ends it.
func (s *Server) Start() {
	go func() {
		err := s.srv.Serve(s.ln)
		if s.dl != nil {
			_ = s.dl.Close() // nothing accepts any more
		}
		if errors.Is(err, grpc.ErrServerStopped) {
			err = nil
		}
		s.done <- err
	}()
}

// SetDrainOnStop says whether Stop first takes the connections queued on
// the listening socket (the default; see transport.DrainListener). Call it
// before Stop.
func (s *Server) SetDrainOnStop(drain bool) { s.drain = drain }

// Stop stops accepting calls and waits for those in flight, up to the grace
// period or ctx, whichever ends first; then it cancels what is left. It
// stops once; later calls return the first one's result.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(outer context.Context) error {
	close(s.stopping) // ends health watches
	ctx := outer
	if s.grace > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.grace)
		defer cancel()
	}
	if s.drain && s.dl != nil {
		if err := s.dl.Drain(ctx); err != nil {
			s.log.Warn("grace period ended while draining the gRPC listener's queue", zap.Error(err))
		}
	}
	graceful := make(chan struct{})
	go func() {
		s.srv.GracefulStop()
		close(graceful)
	}()
	var err error
	select {
	case <-graceful:
	case <-ctx.Done():
		err = ctx.Err()
		s.log.Warn("grace period ended with gRPC calls in flight; canceling them", zap.Error(err))
		// Stop cancels the calls' contexts and closes the connections;
		// it returns once the handlers have, which a run that ignores
		// its context could hold: wait no longer than outer allows.
		go s.srv.Stop()
		select {
		case <-graceful:
		case <-outer.Done():
			return fmt.Errorf("grpc server: calls still running at the stop deadline: %w", outer.Err())
		}
	}
	if serveErr := <-s.done; serveErr != nil {
		return fmt.Errorf("grpc server: %w", serveErr)
	}
	return err
}

// health is the grpc.health.v1 service: "" and the inference service are
// SERVING when the model is ready, NOT_SERVING while it loads, warms up
// or drains; other names are NotFound.
type health struct {
	grpc_health_v1.UnimplementedHealthServer
	svc      *Service
	stopping chan struct{}
}

// watchEvery is how often a Watch looks at the model's state.
const watchEvery = 100 * time.Millisecond

func (h *health) status(service string) (grpc_health_v1.HealthCheckResponse_ServingStatus, error) {
	if service != "" && service != ServiceName {
		return 0, status.Errorf(codes.NotFound, "Unknown service '%s'; this server has '' and '%s'", transport.Quote(service), ServiceName)
	}
	select {
	case <-h.stopping:
		return grpc_health_v1.HealthCheckResponse_NOT_SERVING, nil
	default:
	}
	if h.svc.ready() {
		return grpc_health_v1.HealthCheckResponse_SERVING, nil
	}
	return grpc_health_v1.HealthCheckResponse_NOT_SERVING, nil
}

func (h *health) Check(_ context.Context, r *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	st, err := h.status(r.GetService())
	if err != nil {
		return nil, err
	}
	return &grpc_health_v1.HealthCheckResponse{Status: st}, nil
}

func (h *health) List(context.Context, *grpc_health_v1.HealthListRequest) (*grpc_health_v1.HealthListResponse, error) {
	out := &grpc_health_v1.HealthListResponse{Statuses: map[string]*grpc_health_v1.HealthCheckResponse{}}
	for _, name := range []string{"", ServiceName} {
		st, _ := h.status(name)
		out.Statuses[name] = &grpc_health_v1.HealthCheckResponse{Status: st}
	}
	return out, nil
}

// Watch sends the status, then each change, until the client goes or the
// server stops (after sending NOT_SERVING).
func (h *health) Watch(r *grpc_health_v1.HealthCheckRequest, stream grpc_health_v1.Health_WatchServer) error {
	last := grpc_health_v1.HealthCheckResponse_ServingStatus(-1)
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		st, err := h.status(r.GetService())
		if err != nil {
			// The standard service answers an unknown name with
			// SERVICE_UNKNOWN on Watch, and keeps the stream open.
			st = grpc_health_v1.HealthCheckResponse_SERVICE_UNKNOWN
		}
		if st != last {
			if err := stream.Send(&grpc_health_v1.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-h.stopping:
			if last != grpc_health_v1.HealthCheckResponse_NOT_SERVING && last != grpc_health_v1.HealthCheckResponse_SERVICE_UNKNOWN {
				_ = stream.Send(&grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_NOT_SERVING})
			}
			return status.Error(codes.Unavailable, "the server is stopping")
		case <-tick.C:
		}
	}
}
