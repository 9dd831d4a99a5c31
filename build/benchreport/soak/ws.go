package soak

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A WebSocket client of the standard library alone, and the pools of
// idle and half-sent connections that attack a stateful model's stream.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// WebSocket opcodes.
const (
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xa
)

// wsConn is a client's WebSocket connection.
type wsConn struct {
	c  net.Conn
	br *bufio.Reader
	mu sync.Mutex // writes
	// closing: this side sent its close frame, which the server's answers.
	closing bool
}

// wsRefused is an upgrade the server refused: its status and body.
type wsRefused struct {
	status int
	busy   bool
	body   string
}

func (e *wsRefused) Error() string {
	return fmt.Sprintf("upgrade refused: %d %.200s", e.status, e.body)
}

// wsDial opens a WebSocket to addr (host:port) at path. An upgrade the
// server refuses is a *wsRefused.
func wsDial(ctx context.Context, addr, path string) (*wsConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		c.Close()
		return nil, &wsRefused{status: resp.StatusCode, busy: resp.Header.Get("Retry-After") != "", body: string(body)}
	}
	sum := sha1.Sum([]byte(key + wsGUID))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		c.Close()
		return nil, errors.New("upgrade: a wrong Sec-WebSocket-Accept")
	}
	return &wsConn{c: c, br: br}, nil
}

// frameHeader is the header of a client's frame: final, masked, of
// length n; mask is its masking key.
func frameHeader(op byte, n uint64, mask [4]byte) []byte {
	b := []byte{0x80 | op}
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return append(b, mask[:]...)
}

// masked is payload masked with mask, from offset off of the frame.
func masked(payload []byte, mask [4]byte, off int) []byte {
	out := make([]byte, len(payload))
	for i, c := range payload {
		out[i] = c ^ mask[(off+i)%4]
	}
	return out
}

// clientFrame is a whole client frame.
func clientFrame(op byte, payload []byte) []byte {
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	return append(frameHeader(op, uint64(len(payload)), mask), masked(payload, mask, 0)...)
}

func (w *wsConn) write(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.c.Write(b)
	return err
}

func (w *wsConn) send(op byte, payload []byte) error { return w.write(clientFrame(op, payload)) }

// closeWith sends a close frame with code (once).
func (w *wsConn) closeWith(code int) error {
	if w.closing {
		return nil
	}
	w.closing = true
	return w.send(opClose, binary.BigEndian.AppendUint16(nil, uint16(code)))
}

// wsClosed is the server's close frame: its status and reason.
type wsClosed struct {
	code   int
	reason string
}

func (e *wsClosed) Error() string { return fmt.Sprintf("closed %d: %s", e.code, e.reason) }

// read returns the next data message (text or binary), answering pings.
// A close frame from the server is a *wsClosed, answered by ours.
func (w *wsConn) read() (byte, []byte, error) {
	var msg []byte
	var op byte
	for {
		fop, fin, payload, err := w.frame()
		if err != nil {
			return 0, nil, err
		}
		switch fop {
		case opPing:
			if err := w.send(opPong, payload); err != nil {
				return 0, nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			e := &wsClosed{code: 1005}
			if len(payload) >= 2 {
				e.code, e.reason = int(binary.BigEndian.Uint16(payload)), string(payload[2:])
			}
			_ = w.closeWith(e.code)
			return 0, nil, e
		case 0: // a continuation
		default:
			op = fop
		}
		msg = append(msg, payload...)
		if fin {
			return op, msg, nil
		}
	}
}

// frame reads one frame from the server (unmasked).
func (w *wsConn) frame() (op byte, fin bool, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		return 0, false, nil, err
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return 0, false, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return 0, false, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 64<<20 {
		return 0, false, nil, fmt.Errorf("a frame of %d bytes", n)
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(w.br, payload)
	return op, fin, payload, err
}

// wsAnswer judges how an attacking connection ended: refused at the
// upgrade, closed by the server (with a close frame or without), or held
// open until the soak closed it.
func wsAnswer(err error, phaseOver bool) answer {
	var ref *wsRefused
	var closed *wsClosed
	switch {
	case phaseOver:
		return answer{label: "held open", class: classHeld}
	case errors.As(err, &ref):
		a := answer{label: "refused " + strconv.Itoa(ref.status), note: ref.Error()}
		switch {
		case ref.status >= 400 && ref.status < 500:
			a.class = classRefused
		case ref.status == http.StatusServiceUnavailable && ref.busy:
			a.class, a.label = classBusy, "refused 503 busy"
		default:
			a.class = classServerErr
		}
		return a
	case errors.As(err, &closed):
		a := answer{label: "closed " + strconv.Itoa(closed.code), class: classClosed, note: closed.Error()}
		if closed.code == 1011 || closed.code == 1006 {
			a.class = classServerErr
		}
		return a
	default:
		return answer{label: "dropped (no close frame)", class: classClosed, note: err.Error()}
	}
}

// halfFrame is what a half-sent connection sends: the header of a binary
// frame of announced bytes and 1 KiB of it.
func halfFrame(announced uint64) []byte {
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	part := make([]byte, 1024)
	return append(frameHeader(opBinary, announced, mask), masked(part, mask, 0)...)
}

// pool keeps n connections open on path: idle ones that never send a
// step, or, with half, ones that announce a 16 MiB binary frame and send 1
// KiB of it. Each connection the server closes (or refuses) is counted
// under k and opened again; when ctx ends, the pool closes its
// connections and returns.
func (p *process) pool(ctx context.Context, k *request, path string, n int, half bool) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil && p.alive() {
				a := p.holdOne(ctx, path, half)
				if a.class != classHeld || ctx.Err() != nil {
					p.res.record(k, a, 0)
				}
				if a.class == classRefused || a.class == classBusy || a.class == classServerErr {
					sleep(ctx, time.Second) // refused: a client backs off
				} else {
					sleep(ctx, 100*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

// holdOne opens one attacking connection and holds it until the server
// ends it or ctx does.
func (p *process) holdOne(ctx context.Context, path string, half bool) answer {
	c, err := wsDial(ctx, p.addr, path)
	if err != nil {
		return wsAnswer(err, ctx.Err() != nil)
	}
	defer c.c.Close()
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	if half {
		if err := c.write(halfFrame(16 << 20)); err != nil {
			return wsAnswer(err, ctx.Err() != nil)
		}
	}
	for {
		_, _, err := c.read()
		if err != nil {
			return wsAnswer(err, ctx.Err() != nil)
		}
		// A text message (a step's error) leaves the connection open.
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// wsFlow is a valid stream: three steps, binary float32 messages, each
// answered right, then a normal close.
func (p *process) wsFlow(ctx context.Context, path, output string, xs, sums []float32) answer {
	c, err := wsDial(ctx, p.addr, path)
	if err != nil {
		return wsAnswer(err, false)
	}
	defer c.c.Close()
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	for i, x := range xs {
		if err := c.send(opBinary, binary.LittleEndian.AppendUint32(nil, f32bits(x))); err != nil {
			return wsAnswer(err, false)
		}
		op, msg, err := c.read()
		if err != nil {
			a := wsAnswer(err, false)
			a.class, a.label = classWrong, fmt.Sprintf("%s at step %d", a.label, i)
			return a
		}
		want := fmt.Sprintf(`{"step":%d,"outputs":{"%s":{"shape":[1,1],"data":[%s]}}}`, i, output, formatF32(sums[i]))
		if op != opText || strings.TrimSpace(string(msg)) != want {
			return answer{label: "wrong step answer", class: classWrong, note: fmt.Sprintf("step %d: %.300s, want %s", i, msg, want)}
		}
	}
	if err := c.closeWith(1000); err != nil {
		return wsAnswer(err, false)
	}
	// The server answers our close with its own.
	if _, _, err := c.read(); err != nil {
		var closed *wsClosed
		if !errors.As(err, &closed) || closed.code != 1000 {
			return answer{label: "a wrong close", class: classWrong, note: err.Error()}
		}
	}
	return answer{label: fmt.Sprintf("101, %d steps right", len(xs)), class: classOK}
}
