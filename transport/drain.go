package transport

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// drainQuiet is how long the accept queue must stay empty, once new
// connections are refused, before a draining listener stops accepting: the
// handshakes the kernel had begun (one round trip) complete within it.
const drainQuiet = 100 * time.Millisecond

// DrainListener is a TCP listener that stops without resetting anyone.
// Closing a listening socket makes the kernel reset every connection in its
// accept queue: connections whose handshake completed, whose clients have
// sent their request and wait for the answer. Drain first makes the socket
// refuse new connections (on Linux a socket filter drops their SYNs: the
// client's retry then finds the port closed), then keeps accepting until
// the queue stays empty; only then does Accept report the listener closed.
type DrainListener struct {
	*net.TCPListener
	log *zap.Logger

	draining   atomic.Bool
	refusing   atomic.Bool   // new connections are refused while draining
	drained    chan struct{} // closed when the queue was found empty
	drainOnce  sync.Once
	closed     chan struct{}
	closeOnce  sync.Once
	closeError error
}

// NewDrainListener wraps ln; log receives why new connections could not be
// refused, if they cannot.
func NewDrainListener(ln *net.TCPListener, log *zap.Logger) *DrainListener {
	if log == nil {
		log = zap.NewNop()
	}
	return &DrainListener{TCPListener: ln, log: log, drained: make(chan struct{}), closed: make(chan struct{})}
}

// Accept returns the next connection; while draining, it returns those left
// in the queue, then waits for Close.
func (l *DrainListener) Accept() (net.Conn, error) {
	if !l.draining.Load() {
		c, err := l.TCPListener.Accept()
		if err == nil || !l.draining.Load() || !isTimeout(err) {
			return c, err
		}
		// Drain's deadline woke us: take what is queued.
	}
	// Without a refusal, connections keep coming: stop at the first empty
	// queue instead of waiting for a quiet that may never come.
	quiet := time.Millisecond
	if l.refusing.Load() {
		quiet = drainQuiet
	}
	for {
		select {
		case <-l.drained:
			<-l.closed
			return nil, net.ErrClosed
		default:
		}
		_ = l.TCPListener.SetDeadline(time.Now().Add(quiet))
		c, err := l.TCPListener.Accept()
		if err == nil {
			return c, nil
		}
		if !isTimeout(err) {
			return nil, err
		}
		l.drainOnce.Do(func() { close(l.drained) })
	}
}

// Drain refuses new connections and waits until Accept has taken every
// connection already queued (or ctx ends). The server must be accepting.
func (l *DrainListener) Drain(ctx context.Context) error {
	if err := refuseNew(l.TCPListener); errors.Is(err, errRefuseUnsupported) {
		l.log.Debug("draining what is queued; new connections cannot be refused here")
	} else if err != nil {
		l.log.Warn("cannot refuse new connections while draining; a connection that arrives as the listener closes may be reset", zap.Error(err))
	} else {
		l.refusing.Store(true)
	}
	l.draining.Store(true)
	// Wake an Accept blocked on an empty queue.
	_ = l.TCPListener.SetDeadline(time.Now())
	select {
	case <-l.drained:
		return nil
	case <-l.closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the socket (this process's descriptor of it).
func (l *DrainListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.closeError = l.TCPListener.Close()
	})
	return l.closeError
}

// errRefuseUnsupported: refuseNew cannot work on this system.
var errRefuseUnsupported = errors.New("not supported on this system")
