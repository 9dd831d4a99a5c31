package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/metrics"
	"github.com/svc-dev/svc/transport/payload"
)

// payloadLogger logs the model's inferences (models.NAME.logger), when
// svc.yml declares it: the HTTP middleware and the gRPC interceptor of
// transport/payload, its series in /metrics, and its queue drained on stop,
// after the servers (which it is built before) have stopped. Under
// --workers each worker has a logger of its own; a file sink's file is
// then one per worker (payloads.jsonl: payloads.w1.jsonl, ...).
func payloadLogger(name string, m config.Model, worker *workers.Worker) (fx.Option, error) {
	if m.Logger == nil {
		return fx.Options(), nil
	}
	s, err := m.Logger.Settings()
	if err != nil {
		return nil, err
	}
	if worker != nil && s.URL.Scheme == "file" {
		u := *s.URL
		ext := filepath.Ext(u.Path)
		u.Path = strings.TrimSuffix(u.Path, ext) + ".w" + strconv.Itoa(worker.ID) + ext
		s.URL = &u
	}
	return fx.Options(
		fx.Provide(func(lc fx.Lifecycle, mt *metrics.Metrics, log *zap.Logger) (*payload.Logger, error) {
			l, err := payload.New(payload.Options{LoggerSettings: s, Source: name, Log: log.Named("payload"),
				Registerer: mt.Registerer()})
			if err != nil {
				return nil, err
			}
			lc.Append(fx.StopHook(func(ctx context.Context) error { return l.Close(ctx) }))
			return l, nil
		}),
		fx.Provide(func(l *payload.Logger) *transport.Payloads { return l.Payloads() }),
	), nil
}
