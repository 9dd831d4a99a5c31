package grpcapi

import (
	"context"
	"math"
	mrand "math/rand/v2"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// callLog writes one "rpc" log line per call that the access-log policy
// selects (serve.access_log: all, errors = a code other than OK, sampled,
// off), and turns a panic in a handler into Internal, always logged, so
// that a bug fails one call instead of the process.
type callLog struct {
	log       *zap.Logger
	mode      config.AccessLogMode
	threshold uint64 // sampled: a successful call is logged below it
}

func newCallLog(log *zap.Logger, policy config.AccessLog) *callLog {
	c := &callLog{log: log, mode: policy.Mode}
	if policy.Mode == config.AccessLogSampled {
		c.threshold = math.MaxUint64
		if policy.Rate < 1 {
			c.threshold = uint64(policy.Rate * (1 << 64))
		}
	}
	return c
}

func (c *callLog) wants(code codes.Code) bool {
	switch c.mode {
	case config.AccessLogErrors:
		return code != codes.OK
	case config.AccessLogSampled:
		return code != codes.OK || mrand.Uint64() < c.threshold
	case config.AccessLogOff:
		return false
	}
	return true
}

// recovered turns a recovered panic into the call's error.
func (c *callLog) recovered(method string, p any, err *error) {
	c.log.Error("handler panic", zap.String("grpc_method", method), zap.Any("panic", p), zap.Stack("stack"))
	*err = status.Error(codes.Internal, "Internal server error")
}

func (c *callLog) done(ctx context.Context, method string, start time.Time, err error) {
	code := status.Code(err)
	if !c.wants(code) {
		return
	}
	remote := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	fields := []zap.Field{zap.String("grpc_method", method), zap.String("code", code.String()),
		zap.Duration("duration", time.Since(start)), zap.String("remote", remote)}
	if tid := transport.TraceIDOf(ctx); tid != "" {
		fields = append(fields, zap.String("trace_id", tid))
	}
	c.log.Info("rpc", fields...)
}

func (c *callLog) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			resp = nil
			c.recovered(info.FullMethod, p, &err)
		}
		c.done(ctx, info.FullMethod, start, err)
	}()
	return h(ctx, req)
}

func (c *callLog) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			c.recovered(info.FullMethod, p, &err)
		}
		c.done(ss.Context(), info.FullMethod, start, err)
	}()
	return h(srv, ss)
}
