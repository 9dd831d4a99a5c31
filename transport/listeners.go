package transport

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"syscall"
)

// ErrPortInUse is wrapped by Listen when the address is taken.
var ErrPortInUse = errors.New("port already in use")

// Listen binds host:port, turning "address in use" into a clear error.
func Listen(host string, port int) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: %s is taken by another process; stop it or choose another port with --port", ErrPortInUse, addr)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// ListenerHTTP names the HTTP listener. Each server asks for its socket by
// name; the gRPC server will ask for "grpc".
const ListenerHTTP = "http"

// Binding is an address a named listener binds.
type Binding struct {
	Name string
	Host string
	Port int
}

// Listeners is the set of bound sockets by name. A worker process inherits
// its set from the supervisor; otherwise BindAll makes it.
type Listeners struct {
	byName map[string]net.Listener
}

// NewListeners wraps already-bound sockets (inherited ones).
func NewListeners(byName map[string]net.Listener) *Listeners {
	return &Listeners{byName: byName}
}

// BindAll binds every binding; on an error it closes what it bound.
func BindAll(bs []Binding) (*Listeners, error) {
	l := &Listeners{byName: map[string]net.Listener{}}
	for _, b := range bs {
		if _, dup := l.byName[b.Name]; dup {
			_ = l.Close()
			return nil, fmt.Errorf("listener %q bound twice", b.Name)
		}
		ln, err := Listen(b.Host, b.Port)
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		l.byName[b.Name] = ln
	}
	return l, nil
}

// Get returns the listener called name.
func (l *Listeners) Get(name string) (net.Listener, error) {
	ln, ok := l.byName[name]
	if !ok {
		return nil, fmt.Errorf("no %q listener (have %v)", name, l.Names())
	}
	return ln, nil
}

// Names lists the listeners, sorted.
func (l *Listeners) Names() []string {
	out := make([]string, 0, len(l.byName))
	for n := range l.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Close closes every listener (closing one twice is harmless).
func (l *Listeners) Close() error {
	var errs []error
	for _, ln := range l.byName {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
