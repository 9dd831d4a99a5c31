package main_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/core/workers/seqroute"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
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
	t.Parallel()
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

// TestStreamsAcrossWorkers: under --workers 2, every WebSocket and every
// gRPC stream keeps a sequence of its own, whichever worker took it.
// Each worker named its streams' sequences by a count of its own
// ("ws-7" on both), and a sequence lives on the worker its id hashes to,
// so two streams, one per worker, shared one sequence's state: the soak
// saw streams answer another stream's sums.
func TestStreamsAcrossWorkers(t *testing.T) {
	t.Parallel()
	skipShort(t, "starts two workers")
	port := freePort(t)
	s := startServer(t, model("running_sum.onnx"), "--workers", "2", "--grpc-port", port)
	const streams = 20
	var wss []*websocket.Conn
	for range streams {
		c, _, err := websocket.Dial(context.Background(), wsURL(s, "/v2/models/running_sum/stream"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		if r := wsSend(t, c, websocket.MessageBinary, float32LE([]float32{1})); r.Error != "" || r.Outputs["sum"].Data[0] != 1 {
			t.Fatalf("a WebSocket's first step: %+v", r)
		}
		wss = append(wss, c)
	}
	for i, c := range wss {
		if r := wsSend(t, c, websocket.MessageBinary, float32LE([]float32{1})); r.Error != "" || r.Outputs["sum"].Data[0] != 2 {
			t.Errorf("WebSocket %d's second step: %+v, want the sum 2", i, r)
		}
	}
	svc := grpcClient(t, "127.0.0.1:"+port).Service()
	one := grpcapi.RawRequest("running_sum", grpcapi.Input{Name: "x", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 1}, Data: []float32{1}}})
	step := func(st inference.GRPCInferenceService_ModelStreamInferClient) float32 {
		t.Helper()
		if err := st.Send(one); err != nil {
			t.Fatal(err)
		}
		resp, err := st.Recv()
		if err != nil || resp.GetErrorMessage() != "" {
			t.Fatalf("a stream's step: %v %v", resp, err)
		}
		out := resp.GetInferResponse().GetRawOutputContents()
		if len(out) != 1 || len(out[0]) != 4 {
			t.Fatalf("a stream's step answered %v", resp)
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(out[0]))
	}
	var sts []inference.GRPCInferenceService_ModelStreamInferClient
	for range streams {
		st, err := svc.ModelStreamInfer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = st.CloseSend() }()
		if got := step(st); got != 1 {
			t.Fatalf("a gRPC stream's first step: %v, want 1", got)
		}
		sts = append(sts, st)
	}
	for i, st := range sts {
		if got := step(st); got != 2 {
			t.Errorf("gRPC stream %d's second step: %v, want the sum 2", i, got)
		}
	}
}
