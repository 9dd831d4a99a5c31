package main_test

import (
	"context"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

func int32LE(x ...int32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func wsURL(s *server, path string) string { return "ws" + strings.TrimPrefix(s.URL, "http") + path }

// wsMsg is one message of a connection and what answers it: the output's
// value (a sum, exact) or an error containing err.
type wsMsg struct {
	kind websocket.MessageType
	data []byte
	sum  float32
	err  string
}

func bin(data []byte, sum float32) wsMsg {
	return wsMsg{kind: websocket.MessageBinary, data: data, sum: sum}
}
func txt(data string, sum float32) wsMsg {
	return wsMsg{kind: websocket.MessageText, data: []byte(data), sum: sum}
}
func binErr(data []byte, err string) wsMsg {
	return wsMsg{kind: websocket.MessageBinary, data: data, err: err}
}
func txtErr(data, err string) wsMsg {
	return wsMsg{kind: websocket.MessageText, data: []byte(data), err: err}
}

// wsRun sends each message of a connection to path and checks its answer:
// steps numbered from 0, an error that leaves the connection (and the
// sequence's sum) as it was, or the output named out of shape [1, 1].
func wsRun(t *testing.T, s *server, path, out string, msgs []wsMsg) {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), wsURL(s, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	for i, m := range msgs {
		r := wsSend(t, c, m.kind, m.data)
		if r.Step != i {
			t.Errorf("message %d (%.60s): step %d", i, m.data, r.Step)
		}
		if m.err != "" {
			if !strings.Contains(r.Error, m.err) || r.Outputs != nil {
				t.Errorf("message %d (%.60s): %+v, want the error %q", i, m.data, r, m.err)
			}
			continue
		}
		o, ok := r.Outputs[out]
		if r.Error != "" || len(r.Outputs) != 1 || !ok || len(o.Shape) != 2 || o.Shape[0] != 1 || o.Shape[1] != 1 || len(o.Data) != 1 || o.Data[0] != m.sum {
			t.Errorf("message %d (%.60s): %+v, want %s = [[%v]]", i, m.data, r, out, m.sum)
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}

// TestSequenceWebSocketTensors streams testdata/models/running_sum.onnx
// (float32 x [batch, 1]) and tally.onnx (int32 counts [batch, n], an
// optional float32 grid [batch, h, w]) over the WebSocket: binary messages
// of the streamed input's own type, their shape resolved from the model,
// the length and ?shape=, and JSON text steps naming inputs; every sum is
// exact, every misuse is answered with the step's error and the sequence
// goes on as if it had not come.
func TestSequenceWebSocketTensors(t *testing.T) {
	t.Parallel()
	sum := startServer(t, model("running_sum.onnx"))
	tally := startServer(t, model("tally.onnx"))
	step := func(n float32) string {
		return `{"inputs": {"x": {"shape": [1, 1], "data": [` + strconv.FormatFloat(float64(n), 'g', -1, 32) + `]}}}`
	}
	tests := []struct {
		name string
		srv  *server
		path string
		out  string
		msgs []wsMsg
	}{
		{name: "running_sum binary float32", srv: sum, path: "/v2/models/running_sum/stream", out: "sum", msgs: []wsMsg{
			bin(float32LE([]float32{2}), 2), bin(float32LE([]float32{3}), 5), bin(float32LE([]float32{0.5}), 5.5), bin(float32LE([]float32{-10.25}), -4.75),
		}},
		{name: "running_sum JSON steps", srv: sum, path: "/v2/models/running_sum/stream", out: "sum", msgs: []wsMsg{
			txt(step(4), 4), txt(`{"inputs": {"x": {"data": [[1.5]]}}}`, 5.5), txt(step(-0.5), 5),
			bin(float32LE([]float32{1}), 6), // binary and JSON in one sequence
		}},
		{name: "running_sum misuse", srv: sum, path: "/v2/models/running_sum/stream", out: "sum", msgs: []wsMsg{
			binErr(float32LE([]float32{1, 2}), "input 'x' is float32, shape [1, 1]: a binary message of 8 bytes does not fit; it takes exactly 4 bytes (1 float32), little-endian"),
			binErr([]byte{1, 2, 3}, "a binary message of 3 bytes does not fit"),
			bin(float32LE([]float32{7}), 7),
			txtErr(`{"inputs": {"x": {"shape": [1, 1], "data": [1]}`, "Invalid JSON body"),
			txtErr(`not json`, "Invalid JSON body"),
			txtErr(`{"inputs": {"state": {"shape": [1, 1], "data": [100]}}}`, "svc keeps state 'state': a step gives the inputs x"),
			txtErr(`{"inputs": {"y": {"shape": [1, 1], "data": [1]}}}`, "the model has no input 'y' (inputs: x)"),
			txtErr(`{"inputs": {}}`, `input 'x' needs a value: name it in the step's "inputs"`),
			txtErr(`{"inputs": {"x": {"shape": [1, 2], "data": [1, 2]}}}`, "Invalid shape for 'x': expected [-1, 1], got [1, 2]"),
			txtErr(`{"inputs": {"x": {"shape": [1, 1], "data": ["one"]}}}`, "Invalid value for 'x' at [0]"),
			txt(step(1), 8),
		}},
		{name: "tally binary int32", srv: tally, path: "/v2/models/tally/stream?input=counts", out: "total", msgs: []wsMsg{
			bin(int32LE(1, 2, 3), 6), bin(int32LE(10), 16), bin(int32LE(-4, -4), 8), bin(int32LE(1<<20, 1), 8+1<<20+1),
			binErr([]byte{1, 2, 3, 4, 5, 6}, "input 'counts' is int32, shape [1, -1]: a binary message of 6 bytes does not fit; it takes a positive multiple of 4 bytes (one int32 each), little-endian"),
			binErr(nil, "a binary message of 0 bytes does not fit"),
		}},
		{name: "tally grid shaped, counts from the query", srv: tally, path: "/v2/models/tally/stream?shape=1,2,-1&counts=1", out: "total", msgs: []wsMsg{
			bin(float32LE([]float32{0.5, 0.25, 1, 2}), 4.75),   // [1, 2, 2]
			bin(float32LE([]float32{1, 1, 1, 1, 1, 1}), 11.75), // [1, 2, 3]
			binErr(float32LE([]float32{1, 1, 1}), "input 'grid' is float32, shape [1, 2, -1]: a binary message of 12 bytes does not fit; it takes a positive multiple of 8 bytes (2 float32 for each step of axis 2)"),
			// A JSON step's counts replace the query's.
			txt(`{"inputs": {"counts": {"shape": [1, 2], "data": [3, 4]}}}`, 18.75),
		}},
		{name: "tally grid fixed shape", srv: tally, path: "/v2/models/tally/stream?shape=1,1,2&counts=0", out: "total", msgs: []wsMsg{
			bin(float32LE([]float32{1.5, 2}), 3.5),
			binErr(float32LE([]float32{1.5, 2, 3}), "it takes exactly 8 bytes (2 float32)"),
		}},
		{name: "tally JSON steps, several inputs", srv: tally, path: "/v2/models/tally/stream?input=counts", out: "total", msgs: []wsMsg{
			txt(`{"inputs": {"counts": {"shape": [1, 3], "data": [1, 2, 3]}, "grid": {"shape": [1, 2, 2], "data": [0.5, 0.5, 0.5, 0.5]}}}`, 8),
			txt(`{"inputs": {"grid": {"data": [[[1], [2]]]}, "counts": {"shape": [1, 1], "data": [0]}}}`, 11),
			txtErr(`{"inputs": {"grid": {"shape": [1, 1, 1], "data": [1]}}}`, `input 'counts' needs a value: name it in the step's "inputs"`),
			txtErr(`{"inputs": {"counts": {"shape": [1, 2], "data": [1, 2.5]}}}`, "Invalid value for 'counts' at [1]: 2.5 is not an integer (int32)"),
			bin(int32LE(9), 20),
		}},
		{name: "tally binary grid needs counts", srv: tally, path: "/v2/models/tally/stream?shape=1,1,-1", out: "total", msgs: []wsMsg{
			binErr(float32LE([]float32{1}), "input 'counts' needs a value: binary messages give only 'grid'; send JSON text steps that name 'counts' too"),
			txt(`{"inputs": {"counts": {"shape": [1, 1], "data": [5]}}}`, 5),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wsRun(t, tt.srv, tt.path, tt.out, tt.msgs) })
	}

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			srv  *server
			path string
			want string
		}{
			{tally, "/v2/models/tally/stream", "input 'grid' is float32 [-1, -1, -1], with 2 dynamic axes besides its batch: give the shape of each binary message with ?shape=, such as ?shape=1,4,-1 (-1: the axis the message's length gives)"},
			{tally, "/v2/models/tally/stream?shape=1,2", "shape=1,2: rank 2, the input's is 3; input 'grid' is float32 [-1, -1, -1]"},
			{tally, "/v2/models/tally/stream?shape=1,-1,-1", "shape=1,-1,-1: only one axis can be -1"},
			{tally, "/v2/models/tally/stream?shape=1,x,2", "shape=1,x,2: 'x' is not a size"},
			{tally, "/v2/models/tally/stream?input=state", "input=state: svc keeps state 'state'; stream one of the inputs counts, grid"},
			{tally, "/v2/models/tally/stream?input=volume", "input=volume: the model has no input 'volume' (inputs: counts, grid)"},
			{tally, "/v2/models/tally/stream?input=counts&counts=2", "input=counts: 'counts' also has a value in the URL"},
			{tally, "/v2/models/tally/stream?input=counts&shape=1,2,3", "shape=1,2,3: rank 3, the input's is 2"},
			{sum, "/v2/models/running_sum/stream?shape=1,2", "shape=1,2: axis 1 is 2, the input's is 1"},
		} {
			_, resp, err := websocket.Dial(context.Background(), wsURL(tt.srv, tt.path), nil)
			if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: %v %v, want 400", tt.path, resp, err)
				continue
			}
			r := tt.srv.do(http.MethodGet, tt.path, "", nil, "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) {
				t.Errorf("%s = %d %s, want 400 with %q", tt.path, r.Status, r.Body, tt.want)
			}
		}
	})
}
