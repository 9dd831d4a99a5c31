package main_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/transport/stream"
)

// wsResult is one step's answer on the WebSocket.
type wsResult struct {
	Step    int `json:"step"`
	Outputs map[string]struct {
		Shape []int64   `json:"shape"`
		Data  []float32 `json:"data"`
	} `json:"outputs"`
	Error string `json:"error"`
}

func wsDial(t *testing.T, s *server, query string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+"/v2/models/vad/stream"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

func wsSend(t *testing.T, c *websocket.Conn, kind websocket.MessageType, data []byte) wsResult {
	t.Helper()
	ctx := context.Background()
	if err := c.Write(ctx, kind, data); err != nil {
		t.Fatal(err)
	}
	k, body, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var r wsResult
	if k != websocket.MessageText || json.Unmarshal(body, &r) != nil {
		t.Fatalf("answer %v %s", k, body)
	}
	return r
}

func float32LE(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestSequenceWebSocket streams the speech over the WebSocket endpoint, one
// binary message of float32 samples per chunk: the probabilities equal the
// model run in this process bit for bit; bad messages are answered and
// the connection goes on; a bad connection is refused before the upgrade
// with the reason; SIGTERM closes an open connection with 1001 and why.
func TestSequenceWebSocket(t *testing.T) {
	t.Parallel()
	s := startServer(t, "vad", "--config", vadConfig(t, ""))
	p := vadSession(t)
	sc := testScene(t, 1)
	chunks := sc.chunks()
	want := referenceProbs(t, p, chunks)

	t.Run("speech", func(t *testing.T) {
		c := wsDial(t, s, "?sr=16000")
		got := make([]float32, len(chunks))
		for i, ch := range chunks {
			r := wsSend(t, c, websocket.MessageBinary, float32LE(ch))
			if r.Error != "" || r.Step != i || len(r.Outputs) != 1 {
				t.Fatalf("chunk %d: %+v", i, r)
			}
			got[i] = r.Outputs["output"].Data[0]
		}
		sameBits(t, "WebSocket", got, want)
		checkSegments(t, sc, got)
		_ = c.Close(websocket.StatusNormalClosure, "")
	})

	t.Run("bad messages", func(t *testing.T) {
		c := wsDial(t, s, "?sr=16000")
		for _, tt := range []struct {
			kind websocket.MessageType
			data []byte
			want string
		}{
			{websocket.MessageText, []byte(`{"input": [0]}`), `a JSON step has the key 'input': send {"inputs": {"NAME": {"shape": [...], "data": [...]}}}`},
			{websocket.MessageBinary, []byte{1, 2, 3}, "input 'input' is float32, shape [1, -1]: a binary message of 3 bytes does not fit; it takes a positive multiple of 4 bytes (one float32 each), little-endian"},
		} {
			if r := wsSend(t, c, tt.kind, tt.data); !strings.Contains(r.Error, tt.want) {
				t.Errorf("%q: %+v, want %q", tt.data, r, tt.want)
			}
		}
		// The sequence starts with the first good message.
		if r := wsSend(t, c, websocket.MessageBinary, float32LE(chunks[0])); r.Error != "" || r.Outputs["output"].Data[0] != want[0] {
			t.Errorf("after bad messages: %+v, want %v", r, want[0])
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			path   string
			status int
			want   string
		}{
			{"/v2/models/vad/stream", 400, "input 'sr' needs a value: add ?sr=VALUE to the URL"},
			{"/v2/models/vad/stream?sr=fast", 400, "input 'sr' is int64: 'fast' is not one"},
			{"/v2/models/vad/stream?sr=16000&input=sr", 400, "input=sr: 'sr' also has a value in the URL"},
			{"/v2/models/vad/stream?sr=16000&input=state", 400, "input=state: svc keeps state 'state'"},
			{"/v2/models/other/stream?sr=16000", 404, "Unknown model 'other'"},
		} {
			_, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+tt.path, nil)
			if err == nil || resp == nil || resp.StatusCode != tt.status {
				t.Errorf("%s: %v %v, want %d", tt.path, resp, err, tt.status)
				continue
			}
			r := s.do(http.MethodGet, tt.path, "", nil, "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			if r.Status != tt.status || !strings.Contains(string(r.Body), tt.want) {
				t.Errorf("%s = %d %s, want %d with %q", tt.path, r.Status, r.Body, tt.status, tt.want)
			}
		}
	})

	// SIGTERM with steps in flight: many chunks (the speech over and over)
	// are written without their answers read; once the first answer has come the server is stepping,
	// and SIGTERM comes. Whatever number k of steps it answers before it
	// stops, they are steps 0..k-1, each the probability of that prefix of
	// the speech bit for bit, then the connection closes with 1001 and why,
	// and the server exits 0.
	t.Run("SIGTERM", func(t *testing.T) {
		c := wsDial(t, s, "?sr=16000")
		ctx := context.Background()
		const n = 1000
		long := make([][]float32, n)
		for i := range long {
			long[i] = chunks[i%len(chunks)]
		}
		want := referenceProbs(t, p, long)
		written := make(chan error, 1)
		go func() {
			for _, ch := range long {
				if err := c.Write(ctx, websocket.MessageBinary, float32LE(ch)); err != nil {
					written <- err
					return
				}
			}
			written <- nil
		}()
		var got []wsResult
		read := func() error {
			k, body, err := c.Read(ctx)
			if err != nil {
				return err
			}
			var r wsResult
			if k != websocket.MessageText || json.Unmarshal(body, &r) != nil {
				t.Fatalf("answer %v %s", k, body)
			}
			got = append(got, r)
			return nil
		}
		if err := read(); err != nil {
			t.Fatalf("first answer: %v", err)
		}
		code := make(chan int, 1)
		go func() { code <- s.stop(syscall.SIGTERM) }()
		var err error
		for err == nil {
			err = read()
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != stream.ReasonStopping || !strings.Contains(ce.Reason, "the server is stopping") {
			t.Errorf("after %d answers: %v, want the close 1001 %q", len(got), err, stream.ReasonStopping)
		}
		if len(got) > n {
			t.Fatalf("%d answers to %d chunks", len(got), n)
		}
		probs := make([]float32, len(got))
		for i, r := range got {
			if r.Step != i || r.Error != "" || len(r.Outputs["output"].Data) != 1 {
				t.Fatalf("answer %d of %d: %+v", i, len(got), r)
			}
			probs[i] = r.Outputs["output"].Data[0]
		}
		t.Logf("%d of %d chunks answered before the close", len(got), n)
		sameBits(t, "WebSocket at SIGTERM", probs, want[:len(got)])
		if c := <-code; c != 0 {
			t.Errorf("exit code %d\n%s", c, s.stderr)
		}
		// The writer ends: every chunk written, or the write refused
		// once the connection closed.
		<-written
	})
}

// TestSequenceWebSocketStateless: a model without state has no stream.
func TestSequenceWebSocketStateless(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	_, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+"/v2/models/classifier/stream", nil)
	if err == nil || resp == nil || resp.StatusCode != 400 {
		t.Errorf("stateless model: %v %v, want 400", resp, err)
	}
}
