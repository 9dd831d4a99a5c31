package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-dev/svc/transport/rest"
)

// connLoader sends the HTTP/1.1 requests of a level's workers, each worker
// on a keep-alive connection of its own that it writes and reads itself.
//
// net/http's Transport passes every request to two goroutines of the
// connection's, one that writes it and one that reads the answer, and the
// answer back to the caller: goroutine switches that cost a thread wake-up
// each whenever the cores are idle. On a machine the load generator shares
// with the server that is CPU taken from the server, and at concurrency 1
// most of a small model's latency: svc bench measured a tiny model's p50
// at 160–190 µs through net/http's client, where wrk measured 60 µs. Here
// net/http still writes the requests ((*http.Request).Write, once per body,
// before the run) and parses the answers (http.ReadResponse); only the
// connections are handled here, on the worker's goroutine.
type connLoader struct {
	addr    string // host:port
	path    string // for messages: the path requested
	timeout time.Duration
	heads   [][]byte // each request's head, as net/http writes it
	bodies  [][]byte // and its body
	// post is the request ReadResponse reads the answers of (a POST).
	post  *http.Request
	conns []workerConn
	// staleAfter is staleAfter, but in tests.
	staleAfter time.Duration
}

// workerConn is one worker's connection; c is nil until the worker's
// first request and after an error.
type workerConn struct {
	c  net.Conn
	br *bufio.Reader
	// stop ends the watch that unblocks c when the run is cancelled.
	stop func() bool
	// idleSince is when c's last answer was read.
	idleSince time.Time
	// vec and bufs hold the request being written.
	vec  [2][]byte
	bufs net.Buffers
}

// staleAfter is how long a connection may sit idle before a request checks
// that the server has not closed it meanwhile (as servers close idle
// connections). Under load a worker's connection is never idle that long,
// and the check, a read that must find nothing, is not made.
const staleAfter = time.Second

// newConnLoader prepares the requests POST base+path with bodies, body k
// with the headers header(k), for workers workers. base is an http:// URL.
func newConnLoader(base, path string, bodies [][]byte, header func(k int) http.Header, workers int, timeout time.Duration) (*connLoader, error) {
	u, err := url.Parse(base + path)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s: not an http:// URL", base)
	}
	l := &connLoader{addr: hostPort(u), path: path, timeout: timeout, conns: make([]workerConn, workers), staleAfter: staleAfter}
	l.post, _ = http.NewRequest(http.MethodPost, u.String(), nil)
	for k, body := range bodies {
		req, err := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for name, v := range header(k) {
			req.Header[name] = v
		}
		var full bytes.Buffer
		if err := req.Write(&full); err != nil {
			return nil, fmt.Errorf("write a request: %w", err)
		}
		// The head ends at the first blank line; the body follows it
		// unchanged, and is sent from bodies rather than kept twice.
		end := bytes.Index(full.Bytes(), []byte("\r\n\r\n")) + 4
		if end < 4 || full.Len()-end != len(body) {
			return nil, errors.New("write a request: not a head and the body")
		}
		l.heads = append(l.heads, bytes.Clone(full.Bytes()[:end]))
		l.bodies = append(l.bodies, body)
	}
	if len(l.heads) == 0 {
		return nil, errors.New("no request bodies")
	}
	return l, nil
}

// hostPort is u's host with the scheme's port when it names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func (l *connLoader) op() Op { return l.send }

// send sends request seq of worker w and reads the whole answer. A
// non-200 answer is an error carrying the start of its detail.
func (l *connLoader) send(ctx context.Context, w int, seq int64) (int, error) {
	k := (int64(w) + seq) % int64(len(l.heads))
	wc := &l.conns[w]
	if wc.c != nil && time.Since(wc.idleSince) > l.staleAfter && closedByPeer(wc) {
		l.drop(wc)
	}
	if wc.c == nil {
		if err := l.dial(ctx, wc); err != nil {
			return 0, fmt.Errorf("POST %s: %w", l.path, err)
		}
	}
	if l.timeout > 0 {
		_ = wc.c.SetDeadline(time.Now().Add(l.timeout))
	}
	// Setting a deadline undoes the one the end of ctx sets to unblock the
	// connection; that end, if it came already, is seen here.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// Head and body in one write; the vector lives in wc, as WriteTo
	// takes its address (a local one would be allocated per request).
	wc.vec = [2][]byte{l.heads[k], l.bodies[k]}
	wc.bufs = wc.vec[:]
	if _, err := wc.bufs.WriteTo(wc.c); err != nil {
		l.drop(wc)
		return 0, fmt.Errorf("POST %s: %w", l.path, err)
	}
	resp, err := http.ReadResponse(wc.br, l.post)
	if err != nil {
		l.drop(wc)
		return 0, fmt.Errorf("POST %s: read the answer: %w", l.path, err)
	}
	status := resp.StatusCode
	if status != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, rest.MaxErrorBody))
		err = fmt.Errorf("status %d: %s", status, clip(rest.ErrorDetail(msg), 300))
	}
	if _, cerr := io.Copy(io.Discard, resp.Body); cerr != nil {
		l.drop(wc)
		if err == nil {
			err = fmt.Errorf("read the answer of %s: %w", l.path, cerr)
		}
		return status, err
	}
	if resp.Close {
		l.drop(wc) // the server closes the connection after this answer
	} else {
		wc.idleSince = time.Now()
	}
	return status, err
}

// closedByPeer reports whether wc's idle connection has anything to read:
// the server's end of it (or bytes no request asked for), either way a
// connection not to send on. Where it cannot look without waiting
// (peerClosed), it waits a millisecond for that: a deadline already passed
// would fail the read before it looks.
func closedByPeer(wc *workerConn) bool {
	if wc.br.Buffered() > 0 {
		return true
	}
	if closed, ok := peerClosed(wc.c); ok {
		return closed
	}
	_ = wc.c.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := wc.br.Peek(1)
	_ = wc.c.SetReadDeadline(time.Time{})
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// dial connects wc, and makes ctx's end unblock the connection.
func (l *connLoader) dial(ctx context.Context, wc *workerConn) error {
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", l.addr)
	if err != nil {
		return err
	}
	wc.c, wc.br = c, bufio.NewReaderSize(c, 64<<10)
	wc.stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return nil
}

// drop closes wc's connection; the worker's next request dials anew.
func (l *connLoader) drop(wc *workerConn) {
	if wc.c == nil {
		return
	}
	wc.stop()
	_ = wc.c.Close()
	wc.c, wc.br, wc.stop = nil, nil, nil
}

func (l *connLoader) close() {
	for i := range l.conns {
		l.drop(&l.conns[i])
	}
}
