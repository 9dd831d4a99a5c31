package main_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSequenceEndsOnReload: a reload ends the sequences begun on the old
// model with a clear error (state never crosses from one model to the
// next), and a sequence started afterwards runs on the new one.
func TestSequenceEndsOnReload(t *testing.T) {
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
	if r := s.do(http.MethodPost, "/v2/repository/models/vad/load", "", nil); r.Status != http.StatusOK {
		t.Fatalf("load: %d %s", r.Status, r.Body)
	}
	r := step(map[string]any{"sequence_id": "before"})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "the model was reloaded") {
		t.Fatalf("a step of a sequence begun before the reload: %d %s; want 400 saying the model was reloaded", r.Status, r.Body)
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
