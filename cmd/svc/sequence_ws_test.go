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
			{websocket.MessageText, []byte(`{"input": [0]}`), "text messages are not taken"},
			{websocket.MessageBinary, []byte{1, 2, 3}, "a binary message of 3 bytes: send float32 little-endian samples"},
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
			{"/v2/models/vad/stream?sr=16000&input=sr", 400, "input 'sr' is int64 of rank 0"},
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

	t.Run("SIGTERM", func(t *testing.T) {
		c := wsDial(t, s, "?sr=16000")
		for _, ch := range chunks[:5] {
			wsSend(t, c, websocket.MessageBinary, float32LE(ch))
		}
		code := make(chan int, 1)
		go func() { code <- s.stop(syscall.SIGTERM) }()
		_, _, err := c.Read(context.Background())
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "the server is stopping") {
			t.Errorf("open connection at SIGTERM: %v", err)
		}
		if c := <-code; c != 0 {
			t.Errorf("exit code %d\n%s", c, s.stderr)
		}
	})
}

// TestSequenceWebSocketStateless: a model without state has no stream.
func TestSequenceWebSocketStateless(t *testing.T) {
	s := startServer(t, model("classifier.onnx"))
	_, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+"/v2/models/classifier/stream", nil)
	if err == nil || resp == nil || resp.StatusCode != 400 {
		t.Errorf("stateless model: %v %v, want 400", resp, err)
	}
}
