package transport

import (
	"context"
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
	return listen(host, port, "--port")
}

// listen is Listen; flag names the option that chooses the port.
func listen(host string, port int, flag string) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := listenTCP(addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: %s is taken by another process; stop it or choose another port with %s", ErrPortInUse, addr, flag)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// listenTCP binds a plain TCP socket. Go would make it a Multipath TCP
// socket where the kernel has MPTCP, and a socket filter cannot be attached
// to those: stopping would then reset the connections that arrive as it
// closes (see DrainListener).
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// ListenerHTTP names the HTTP listener. Each server asks for its socket by
// name.
const ListenerHTTP = "http"

// ListenerGRPC names the gRPC listener, bound when serve.grpc_port is set.
const ListenerGRPC = "grpc"

// Binding is an address a named listener binds.
type Binding struct {
	Name string
	Host string
	Port int
	// Flag is the command-line option that chooses Port, for the message
	// of a busy port ("--port" when empty).
	Flag string
}

// ServeBindings are the listeners serve binds: "http", and "grpc" when
// grpcPort is not 0.
func ServeBindings(host string, port, grpcPort int) []Binding {
	bs := []Binding{{Name: ListenerHTTP, Host: host, Port: port, Flag: "--port"}}
	if grpcPort != 0 {
		bs = append(bs, Binding{Name: ListenerGRPC, Host: host, Port: grpcPort, Flag: "--grpc-port"})
	}
	return bs
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
		flag := b.Flag
		if flag == "" {
			flag = "--port"
		}
		ln, err := listen(b.Host, b.Port, flag)
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		l.byName[b.Name] = ln
	}
	return l, nil
}

// Has reports whether there is a listener called name.
func (l *Listeners) Has(name string) bool {
	_, ok := l.byName[name]
	return ok
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
