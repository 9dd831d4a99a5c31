package soak

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGRPCCall sends ModelInfer calls to a fake gRPC server (HTTP/2
// without TLS): an answer with trailers, and a trailers-only refusal.
func TestGRPCCall(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != modelInferPath || r.Header.Get("Content-Type") != "application/grpc" || len(body) < 5 ||
			int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
			http.Error(w, "not gRPC", http.StatusBadRequest)
			return
		}
		model, _ := pbField(body[5:], 1)
		w.Header().Set("Content-Type", "application/grpc")
		if string(model[0]) != "ok" {
			w.Header().Set("Grpc-Status", "8")
			w.Header().Set("Grpc-Message", "too%20many pictures")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		msg := pbBytes(nil, 6, []byte("raw"))
		frame := append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...)
		_, _ = w.Write(frame)
		w.Header().Set("Grpc-Status", "0")
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	c := newGRPCClient()
	addr := strings.TrimPrefix(srv.URL, "http://")
	code, _, resp, err := grpcCall(context.Background(), c, addr, modelInferPath, inferRequest("ok", nil))
	raw, _ := rawOutputs(resp)
	if err != nil || code != 0 || len(raw) != 1 || string(raw[0]) != "raw" {
		t.Errorf("ok: %d %q %v", code, raw, err)
	}
	code, msg, _, err := grpcCall(context.Background(), c, addr, modelInferPath, inferRequest("big", nil))
	if err != nil || code != 8 || msg != "too many pictures" {
		t.Errorf("refused: %d %q %v", code, msg, err)
	}
	if a := grpcAnswer(code, msg, nil); a.label != "gRPC RESOURCE_EXHAUSTED" || a.class != classRefused {
		t.Errorf("answer %+v", a)
	}
}

// fakeStream is a WebSocket server of running_sum's stream: each binary
// float32 is answered with the running sum; a close with a close. Query
// keys change it: refuse (429 before the upgrade), idle (closes 1008 at
// once), half (closes 1009 on a frame of more than 1 MiB).
func fakeStream(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Has("refuse") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":"1000 WebSocket streams are open"}`)
			return
		}
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + wsGUID))
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
		_ = brw.Flush()
		send := func(op byte, p []byte) {
			_, _ = c.Write(append([]byte{0x80 | op, byte(len(p))}, p...)) // short frames only
		}
		closeWith := func(code int, reason string) {
			send(opClose, append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...))
		}
		if q.Has("idle") {
			closeWith(1008, "no message")
			return
		}
		var total float32
		for step := 0; ; step++ {
			op, payload, n, err := serverFrame(brw.Reader)
			if err != nil {
				return
			}
			switch {
			case n > 1<<20:
				closeWith(1009, "too big")
				return
			case op == opClose:
				closeWith(1000, "")
				return
			case op == opBinary && len(payload) == 4:
				total += math.Float32frombits(binary.LittleEndian.Uint32(payload))
				send(opText, fmt.Appendf(nil, `{"step":%d,"outputs":{"sum":{"shape":[1,1],"data":[%s]}}}`, step, formatF32(total)))
			}
		}
	}))
}

// serverFrame reads a client's frame (masked): the payload when it is
// short, and the length it announces.
func serverFrame(br *bufio.Reader) (op byte, payload []byte, n uint64, err error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, 0, err
	}
	op, n = h[0]&0x0f, uint64(h[1]&0x7f)
	switch n {
	case 126:
		var b [2]byte
		_, err = io.ReadFull(br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, err = io.ReadFull(br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	var mask [4]byte
	if _, err := io.ReadFull(br, mask[:]); err != nil || h[1]&0x80 == 0 {
		return 0, nil, 0, fmt.Errorf("an unmasked client frame (%v)", err)
	}
	if n > 1<<20 {
		return op, nil, n, err
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(br, payload); err != nil {
		return 0, nil, 0, err
	}
	return op, masked(payload, mask, 0), n, nil
}

func TestWebSocket(t *testing.T) {
	srv := fakeStream(t)
	defer srv.Close()
	p := &process{addr: strings.TrimPrefix(srv.URL, "http://"), done: make(chan struct{})}
	ctx := context.Background()
	if a := p.wsFlow(ctx, "/stream", "sum", seqSteps, seqSums); a.class != classOK || a.label != "101, 3 steps right" {
		t.Errorf("a valid stream: %+v", a)
	}
	if a := p.wsFlow(ctx, "/stream", "sum", seqSteps, []float32{2, 5, 6}); a.class != classWrong {
		t.Errorf("a wrong sum: %+v", a)
	}
	tests := []struct {
		path  string
		half  bool
		label string
		class class
	}{
		{"/stream?refuse", false, "refused 429", classRefused},
		{"/stream?idle", false, "closed 1008", classClosed},
		{"/stream", true, "closed 1009", classClosed},
	}
	for _, tt := range tests {
		if a := p.holdOne(ctx, tt.path, tt.half); a.label != tt.label || a.class != tt.class {
			t.Errorf("%s (half %v): %+v", tt.path, tt.half, a)
		}
	}
	// Held until the phase ends: the soak closes it.
	hctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if a := p.holdOne(hctx, "/stream", false); a.class != classHeld {
		t.Errorf("held: %+v", a)
	}
	if a := wsAnswer(&wsClosed{code: 1011}, false); a.class != classServerErr {
		t.Errorf("1011: %+v", a)
	}
}
