// Package payload is the payload logger (models.NAME.logger): each
// inference's request and response, as the client sent and received them,
// sent as a CloudEvent (KServe's logger semantics) to a receiver or written
// to a file, from a bounded queue, never holding a request up.
package payload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/config"
)

// The event types, as KServe names them.
const (
	TypeRequest  = "org.kubeflow.serving.inference.request"
	TypeResponse = "org.kubeflow.serving.inference.response"
)

// Reasons an event is dropped: svc_logger_dropped_total's reason label.
const (
	ReasonQueueFull = "queue_full" // the queue (logger.queue or logger.queue_bytes) was full
	ReasonRefused   = "refused"    // the receiver answered 4xx
	ReasonFailed    = "failed"     // every try failed (logger.retries)
	ReasonShutdown  = "shutdown"   // still queued when the drain deadline (logger.drain) passed
)

// Event is one request or response.
type Event struct {
	ID          string
	Type        string
	Source      string
	Time        time.Time
	ContentType string
	// Header holds the request's headers (a request event), redacted.
	Header http.Header
	Data   []byte
}

// sink delivers one event; a refusal is errRefused (not retried).
type sink interface {
	send(ctx context.Context, e *Event) error
	close() error
}

var errRefused = errors.New("refused")

// Options configure a Logger.
type Options struct {
	config.LoggerSettings
	// Source is ce-source: the model's name.
	Source string
	// KeyHeader is the API key's header, never logged (Authorization).
	KeyHeader string
	Log       *zap.Logger
	// Registerer gets svc_logger_dropped_total and svc_logger_sent_total
	// (nil: not registered).
	Registerer prometheus.Registerer
	// Client sends to an http(s) receiver (nil: a client of its own).
	Client *http.Client
	// backoff is the first retry's wait (0: 100ms).
	backoff time.Duration
}

// Logger queues events and delivers them.
type Logger struct {
	o       Options
	sink    sink
	redact  map[string]bool
	queue   chan *Event
	bytes   atomic.Int64
	mu      sync.RWMutex
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	done    sync.WaitGroup
	dropped *prometheus.CounterVec
	sent    prometheus.Counter
	warned  atomic.Int64 // unix nanoseconds of the last warning
	drops   atomic.Int64 // drops since the last warning
}

// senders is how many events are delivered to a receiver at once.
const senders = 4

// New starts a logger: its senders run until Close.
func New(o Options) (*Logger, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.backoff <= 0 {
		o.backoff = 100 * time.Millisecond
	}
	l := &Logger{o: o, queue: make(chan *Event, o.Queue), redact: redactions(o.Redact, o.KeyHeader)}
	l.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_logger_dropped_total",
		Help: "Payload-log events dropped, by reason: queue_full, refused, failed, shutdown.",
	}, []string{"reason"})
	l.sent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "svc_logger_sent_total",
		Help: "Payload-log events delivered.",
	})
	for _, r := range []string{ReasonQueueFull, ReasonRefused, ReasonFailed, ReasonShutdown} {
		l.dropped.WithLabelValues(r)
	}
	if o.Registerer != nil {
		for _, c := range []prometheus.Collector{l.dropped, l.sent} {
			if err := o.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("payload logger metrics: %w", err)
			}
		}
	}
	n := 1
	switch o.URL.Scheme {
	case "file":
		s, err := openFile(o.URL.Path, o.MaxFileSize, o.MaxFiles)
		if err != nil {
			return nil, fmt.Errorf("logger.url: %w", err)
		}
		l.sink = s
	default:
		c := o.Client
		if c == nil {
			c = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
		}
		l.sink = &httpSink{url: o.URL.String(), client: c, timeout: o.Timeout}
		n = senders
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.done.Add(n)
	for range n {
		go l.deliver()
	}
	return l, nil
}

// Mode is what the logger logs: all, request or response.
func (l *Logger) Mode() string { return l.o.Mode }

// Submit queues e without waiting: a full queue, or a closed logger,
// drops it.
func (l *Logger) Submit(e *Event) {
	size := int64(len(e.Data))
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.drop(ReasonShutdown, 1)
		return
	}
	if l.bytes.Add(size) > l.o.QueueBytes {
		l.bytes.Add(-size)
		l.drop(ReasonQueueFull, 1)
		return
	}
	select {
	case l.queue <- e:
	default:
		l.bytes.Add(-size)
		l.drop(ReasonQueueFull, 1)
	}
}

// deliver sends queued events until the queue is closed and empty, or the
// logger's context ends (the drain deadline): what is left is dropped.
func (l *Logger) deliver() {
	defer l.done.Done()
	for e := range l.queue {
		l.bytes.Add(-int64(len(e.Data)))
		if l.ctx.Err() != nil {
			l.drop(ReasonShutdown, 1)
			continue
		}
		if reason := l.sendWithRetries(e); reason != "" {
			l.drop(reason, 1)
			continue
		}
		l.sent.Inc()
	}
}

// sendWithRetries tries e up to 1+Retries times, waiting 100ms, 200ms,
// 400ms... between tries; "" once delivered, or why it was dropped.
func (l *Logger) sendWithRetries(e *Event) string {
	wait := l.o.backoff
	for try := 0; ; try++ {
		err := l.sink.send(l.ctx, e)
		switch {
		case err == nil:
			return ""
		case errors.Is(err, errRefused):
			return ReasonRefused
		case l.ctx.Err() != nil:
			return ReasonShutdown
		case try >= l.o.Retries:
			return ReasonFailed
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.ctx.Done():
			t.Stop()
			return ReasonShutdown
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// drop counts n events dropped for reason, and warns at most once a
// minute with the count since the last warning.
func (l *Logger) drop(reason string, n int) {
	l.dropped.WithLabelValues(reason).Add(float64(n))
	total := l.drops.Add(int64(n))
	now := time.Now().UnixNano()
	last := l.warned.Load()
	if now-last < int64(time.Minute) || !l.warned.CompareAndSwap(last, now) {
		return
	}
	l.drops.Add(-total)
	l.o.Log.Warn("payload logger dropped events", zap.Int64("dropped", total), zap.String("reason", reason),
		zap.String("url", l.o.URL.Redacted()), zap.String("see", "svc_logger_dropped_total"))
}

// Dropped is how many events were dropped for reason.
func (l *Logger) Dropped(reason string) float64 {
	return counterValue(l.dropped.WithLabelValues(reason))
}

// Close stops taking events and delivers those queued until ctx ends or
// the drain deadline (logger.drain) passes, whichever is first; what is
// still queued then is dropped and counted. It never waits beyond them.
func (l *Logger) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.queue)
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.done.Wait(); close(done) }()
	t := time.NewTimer(l.o.Drain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	// Past the deadline: the senders give up their tries and drop the rest.
	l.cancel()
	<-done
	return l.sink.close()
}
