package main_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"syscall"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	"github.com/coder/websocket"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// toneChunk is the i-th chunk of a tone for the VAD model.
func toneChunk(i int) []float32 {
	x := make([]float32, vadChunk)
	for j := range x {
		x[j] = float32(0.3 * math.Sin(float64(i*vadChunk+j)*2*math.Pi*220/vadRate))
	}
	return x
}

// loggedGRPCStream sends steps on one ModelStreamInfer call of request id
// id: the stream's own sequence, with a bad request among them; each
// request is logged as "ID/N" with its answer.
func loggedGRPCStream(t *testing.T, gc *grpcapi.Client, id string, steps int, sent map[string]logged) {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-request-id", id, "x-secret", "s3cret",
		"x-kept", "kept", "authorization", "Bearer "+loggerKey)
	st, err := gc.Service().ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		req := streamRequest(toneChunk(i), "", false, i == steps-1)
		if i == 2 {
			req.Inputs[0].Name = "nosuch"
		}
		want := proto.Clone(req).(*inference.ModelInferRequest)
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if bad := resp.GetErrorMessage() != ""; bad != (i == 2) {
			t.Errorf("stream %s request %d: error %q", id, i, resp.GetErrorMessage())
		}
		sent[fmt.Sprintf("%s/%d", id, i)] = logged{grpcReq: want, grpcStreamResp: resp}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	md, err := st.Header()
	if got := md.Get("x-request-id"); err != nil || len(got) != 1 || got[0] != id {
		t.Errorf("stream %s: x-request-id %v %v", id, got, err)
	}
}

// loggedWebSocket sends steps on one WebSocket connection of request id
// id: binary and JSON messages, a bad one among them; each is logged as
// "ID/N" with its answer, as the frames carried them.
func loggedWebSocket(t *testing.T, s *server, id string, steps int, sent map[string]logged) {
	t.Helper()
	h := http.Header{"X-Request-Id": {id}, "Authorization": {"Bearer " + loggerKey}, "X-Secret": {"s3cret"}, "X-Kept": {"kept"}}
	url := "ws" + strings.TrimPrefix(s.URL, "http") + "/v2/models/vad/stream?sr=16000"
	c, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if got := resp.Header.Get("X-Request-ID"); got != id {
		t.Errorf("WebSocket %s: X-Request-ID %q", id, got)
	}
	ctx := context.Background()
	for i := range steps {
		kind, data, ct := websocket.MessageBinary, float32LE(toneChunk(i)), "application/octet-stream"
		switch i % 3 {
		case 1:
			kind, ct = websocket.MessageText, "application/json"
			data = fmt.Appendf(nil, `{"inputs": {"input": {"shape": [1, %d], "data": %s}}}`, vadChunk, floatsJSON(toneChunk(i)))
		case 2:
			data = []byte{1, 2, 3} // not a whole float32: answered with an error
		}
		if err := c.Write(ctx, kind, data); err != nil {
			t.Fatal(err)
		}
		k, answer, err := c.Read(ctx)
		if err != nil || k != websocket.MessageText {
			t.Fatalf("WebSocket %s step %d: %v %v", id, i, k, err)
		}
		if bad := strings.Contains(string(answer), `"error"`); bad != (i%3 == 2) {
			t.Errorf("WebSocket %s step %d: %s", id, i, answer)
		}
		sent[fmt.Sprintf("%s/%d", id, i)] = logged{reqType: ct, req: data, respType: "application/json", resp: answer}
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}

func floatsJSON(x []float32) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// TestPayloadLoggerStreams: each request of a gRPC stream and each step
// of a WebSocket is logged as its own pair of events, exactly once, as
// the client sent and got it (the gRPC request before svc sets its
// stream's sequence_id on it; the WebSocket's frames byte for byte),
// correlated by the stream's request id, a slash and the message's
// index, with the stream's headers but the redacted ones.
func TestPayloadLoggerStreams(t *testing.T) {
	t.Parallel()
	rc := startCEReceiver(t, func(cloudevents.Event) protocol.Result { return cloudevents.ResultACK })
	port := freePort(t)
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + loggerKey}, "vad", "--config",
		vadConfig(t, "    logger: {url: "+rc.url+", redact: [X-Secret]}\naccess:\n  api_keys_env: SVC_API_KEYS\n"),
		"--grpc-port", port)
	gc := grpcClient(t, "127.0.0.1:"+port, grpcapi.WithAPIKey(loggerKey))
	sent := map[string]logged{}
	for _, id := range []string{"grpc-a", "grpc-b"} {
		loggedGRPCStream(t, gc, id, 6, sent)
	}
	for _, id := range []string{"ws-a", "ws-b"} {
		loggedWebSocket(t, s, id, 7, sent)
	}
	want := 2 * len(sent)
	waitUntil(t, s.done, "every event received", func() error {
		if n := len(rc.received()); n < want {
			return fmt.Errorf("%d events of %d", n, want)
		}
		return nil
	})
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("svc exited %d", code)
	}
	checkLogged(t, rc, "vad", sent)
	// The WebSocket's handshake is the connection's, not the messages'.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for key, h := range rc.headers {
		if h.Get("Sec-WebSocket-Key") != "" || h.Get("Sec-WebSocket-Version") != "" {
			t.Errorf("event %s: logged the WebSocket handshake's headers: %v", key, h)
		}
	}
}
