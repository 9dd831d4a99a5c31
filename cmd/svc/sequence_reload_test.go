package main_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/transport/stream"
)

// TestSequenceEndsOnReload: a reload ends the sequences begun on the old
// model with a clear error (state never crosses from one model to the
// next), and a sequence started afterwards runs on the new one. A
// WebSocket connection, whose sequence cannot be started again under it,
// gets the error as its step's answer and is closed (1000, and why); a new
// connection streams on the new model.
func TestSequenceEndsOnReload(t *testing.T) {
	t.Parallel()
	skipShort(t, "a stateful model reloaded")
	s := startServer(t, "vad", "--config", vadConfig(t, ""))
	chunk := make([]float32, vadChunk)
	step := func(params map[string]any) response {
		t.Helper()
		return v2Step(s, chunk, params)
	}
	if r := step(map[string]any{"sequence_id": "before", "sequence_start": true}); r.Status != http.StatusOK {
		t.Fatalf("first step: %d %s", r.Status, r.Body)
	}
	if r := step(map[string]any{"sequence_id": "before"}); r.Status != http.StatusOK {
		t.Fatalf("second step: %d %s", r.Status, r.Body)
	}
	ws := wsDial(t, s, "?sr=16000")
	if r := wsSend(t, ws, websocket.MessageBinary, float32LE(chunk)); r.Error != "" {
		t.Fatalf("WebSocket step before the reload: %+v", r)
	}
	if r := s.do(http.MethodPost, "/v2/repository/models/vad/load", "", nil); r.Status != http.StatusOK {
		t.Fatalf("load: %d %s", r.Status, r.Body)
	}
	r := step(map[string]any{"sequence_id": "before"})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "the model was reloaded") {
		t.Fatalf("a step of a sequence begun before the reload: %d %s; want 400 saying the model was reloaded", r.Status, r.Body)
	}
	if r := wsSend(t, ws, websocket.MessageBinary, float32LE(chunk)); !strings.Contains(r.Error, "is no longer active, the model was reloaded") {
		t.Errorf("WebSocket step after the reload: %+v; want the error saying the model was reloaded", r)
	}
	_, _, err := ws.Read(context.Background())
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || ce.Reason != stream.ReasonEnded {
		t.Errorf("WebSocket after its sequence ended: %v; want a close 1000 with %q", err, stream.ReasonEnded)
	}
	if r := wsSend(t, wsDial(t, s, "?sr=16000"), websocket.MessageBinary, float32LE(chunk)); r.Error != "" || r.Step != 0 {
		t.Errorf("a new WebSocket after the reload: %+v", r)
	}
	for i, params := range []map[string]any{
		{"sequence_id": "after", "sequence_start": true},
		{"sequence_id": "after"},
		{"sequence_id": "before", "sequence_start": true, "sequence_end": true},
	} {
		if r := step(params); r.Status != http.StatusOK {
			t.Fatalf("step %d after the reload (%v): %d %s", i, params, r.Status, r.Body)
		}
	}
}
