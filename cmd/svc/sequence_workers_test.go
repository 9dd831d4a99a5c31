package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/core/workers/seqroute"
)

// idsOf returns n sequence ids that worker owner of two holds.
func idsOf(owner, n int, prefix string) []string {
	r := seqroute.New("", 0, 2)
	var ids []string
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprint(prefix, i)
		if w, _ := r.Owner(id); w == owner {
			ids = append(ids, id)
		}
	}
	return ids
}

// freshStep is v2Step on a new connection, so that either worker may take
// it; it returns the answer and the worker that answered.
func freshStep(t *testing.T, s *server, chunk []float32, params map[string]any) (response, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"parameters": params,
		"inputs": []map[string]any{
			{"name": "input", "datatype": "FP32", "shape": []int{1, len(chunk)}, "data": chunk},
			{"name": "sr", "datatype": "INT64", "shape": []int{}, "data": []int64{vadRate}},
		},
	})
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Post(s.URL+"/v2/models/vad/infer", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}, resp.Header.Get(workers.WorkerIDHeader)
}

// TestSequenceWorkers serves Silero VAD with --workers 2: sequences held by
// each worker are stepped through connections that either worker takes,
// and their probabilities equal the model's run in process bit for bit
// (a step on the other worker is forwarded to the one that holds the
// state); then the worker that holds a sequence is killed mid-sequence:
// its next step gets an error saying the worker died, the other worker's
// sequence goes on, and a new sequence starts on the replacement.
func TestSequenceWorkers(t *testing.T) {
	skipShort(t, "starts two workers")
	s := startServer(t, "vad", "--config", vadConfig(t, ""), "--workers", "2")
	p := vadSession(t)
	chunks := testScene(t, 1).chunks()[:60]
	want := referenceProbs(t, p, chunks)
	ids := append(idsOf(1, 2, "w"), idsOf(2, 2, "w")...)
	answered := map[string]int{}
	for _, id := range ids {
		got := make([]float32, len(chunks))
		for i, ch := range chunks {
			r, worker := freshStep(t, s, ch, map[string]any{"sequence_id": id, "sequence_start": i == 0})
			got[i] = v2Outputs(t, r)["output"][0]
			answered[worker]++
		}
		sameBits(t, "sequence "+id, got, want)
	}
	t.Logf("steps answered by worker: %v", answered)

	// The kill.
	survivor, victim := idsOf(1, 1, "alive")[0], idsOf(2, 1, "victim")[0]
	for i := 0; i < 5; i++ {
		for _, id := range []string{survivor, victim} {
			r, _ := freshStep(t, s, chunks[i], map[string]any{"sequence_id": id, "sequence_start": i == 0})
			v2Outputs(t, r)
		}
	}
	pid := s.workerPids(t)["2"]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitRestart(2, 1)
	r, _ := freshStep(t, s, chunks[5], map[string]any{"sequence_id": victim})
	if r.Status != 400 || !strings.Contains(string(r.Body), "sequence '"+victim+"' is no longer active") || !strings.Contains(string(r.Body), "died") {
		t.Errorf("a step of the dead worker's sequence: %d %s", r.Status, r.Body)
	}
	r, _ = freshStep(t, s, chunks[5], map[string]any{"sequence_id": survivor})
	if got := v2Outputs(t, r)["output"][0]; got != want[5] {
		t.Errorf("the other worker's sequence answered %v, want %v", got, want[5])
	}
	r, _ = freshStep(t, s, chunks[0], map[string]any{"sequence_id": victim, "sequence_start": true, "sequence_end": true})
	if got := v2Outputs(t, r)["output"][0]; got != want[0] {
		t.Errorf("a new sequence on the replacement answered %v, want %v", got, want[0])
	}
}
