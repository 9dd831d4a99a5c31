package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// vadConfig writes an svc.yml serving Silero VAD v5 as "vad", carrying 64
// samples of context between steps, with the sequence section given
// (YAML, "" for none).
func vadConfig(t testing.TB, section string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "svc.yml")
	body := fmt.Sprintf("models:\n  vad:\n    path: %s\n    sequence:\n      context: {input: %d}\n%s", vadModel(t), vadContext, section)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// vadModel is Silero VAD's file; a test (not a benchmark) fails without
// it, or skips under -short (thirdParty).
func vadModel(tb testing.TB) string {
	if t, ok := tb.(*testing.T); ok {
		return thirdParty(t, "silero-vad")
	}
	return filepath.Join(repoRoot, "build", "models", "silero-vad", "model.onnx")
}

// v2Step is one step over the v2 REST API: the chunk as FP32 JSON, the
// sequence parameters as given.
func v2Step(s *server, chunk []float32, params map[string]any) response {
	s.t.Helper()
	body, err := json.Marshal(map[string]any{
		"parameters": params,
		"inputs": []map[string]any{
			{"name": "input", "datatype": "FP32", "shape": []int{1, len(chunk)}, "data": chunk},
			{"name": "sr", "datatype": "INT64", "shape": []int{}, "data": []int64{vadRate}},
		},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return s.do(http.MethodPost, "/v2/models/vad/infer", "application/json", strings.NewReader(string(body)))
}

// v2Outputs decodes a v2 answer's outputs by name.
func v2Outputs(t *testing.T, r response) map[string][]float32 {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("infer = %d %s", r.Status, r.Body)
	}
	var out struct {
		Outputs []struct {
			Name string    `json:"name"`
			Data []float32 `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string][]float32{}
	for _, o := range out.Outputs {
		m[o.Name] = o.Data
	}
	return m
}

// grpcStep is one step over gRPC, the sequence id an uint64_param.
func grpcStep(ctx context.Context, c *grpcapi.Client, id uint64, start, end bool, chunk []float32) (float32, error) {
	req := grpcapi.RawRequest("vad",
		grpcapi.Input{Name: "input", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, int64(len(chunk))}, Data: chunk}},
		grpcapi.Input{Name: "sr", Tensor: &tensor.Tensor{DType: tensor.Int64, Shape: []int64{}, Data: []int64{vadRate}}},
	)
	req.Parameters = map[string]*inference.InferParameter{
		"sequence_id":    {ParameterChoice: &inference.InferParameter_Uint64Param{Uint64Param: id}},
		"sequence_start": {ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: start}},
		"sequence_end":   {ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: end}},
	}
	resp, err := c.Infer(ctx, req)
	if err != nil {
		return 0, err
	}
	outs, err := grpcapi.Outputs(resp)
	if err != nil {
		return 0, err
	}
	if len(outs) != 1 || resp.Outputs[0].Name != "output" {
		return 0, fmt.Errorf("a step answered %d outputs (%v), want output alone", len(outs), resp.Outputs)
	}
	return outs[0].Data.([]float32)[0], nil
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d probabilities, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: chunk %d: %v, in process %v", what, i, got[i], want[i])
		}
	}
}

// TestSequenceVADServer serves Silero VAD v5 and streams the synthesised
// speech through a real server as sequences: over v2 REST (sequence_id a
// string), /predict (the X-Sequence-* headers) and gRPC (an uint64 id),
// alone and 32 at once; every probability equals, bit for bit, the model
// run in this process with the state carried by hand, and the speech found
// matches where it was placed.
func TestSequenceVADServer(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, "vad", "--config", vadConfig(t, ""), "--grpc-port", port)
	p := vadSession(t)
	sc := testScene(t, 1)
	chunks := sc.chunks()
	want := referenceProbs(t, p, chunks)

	t.Run("info", func(t *testing.T) {
		var info struct {
			Sequence struct {
				States []struct {
					Input, Output string
					Axis          int `json:"batch_axis"`
				} `json:"states"`
				Context  map[string]int `json:"context"`
				Batching bool           `json:"batching"`
			} `json:"sequence"`
		}
		if err := json.Unmarshal(s.get("/info").Body, &info); err != nil {
			t.Fatal(err)
		}
		q := info.Sequence
		if len(q.States) != 1 || q.States[0].Input != "state" || q.States[0].Output != "stateN" || q.States[0].Axis != 1 || q.Context["input"] != vadContext || !q.Batching {
			t.Errorf("/info sequence: %+v", q)
		}
	})

	t.Run("v2 REST", func(t *testing.T) {
		got := make([]float32, len(chunks))
		for i, c := range chunks {
			params := map[string]any{"sequence_id": "speech-1", "sequence_start": i == 0, "sequence_end": i == len(chunks)-1}
			out := v2Outputs(t, v2Step(s, c, params))
			if _, ok := out["stateN"]; ok {
				t.Fatal("a step answered the state without sequence_state")
			}
			got[i] = out["output"][0]
		}
		sameBits(t, "v2 REST", got, want)
		checkSegments(t, sc, got)
	})

	t.Run("predict headers", func(t *testing.T) {
		got := make([]float32, len(chunks))
		for i, c := range chunks {
			body, _ := json.Marshal(map[string]any{"input": [][]float32{c}, "sr": vadRate})
			r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(string(body)),
				"X-Sequence-Id", "speech-2", "X-Sequence-Start", fmt.Sprint(i == 0), "X-Sequence-End", fmt.Sprint(i == len(chunks)-1))
			if r.Status != 200 {
				t.Fatalf("chunk %d: %d %s", i, r.Status, r.Body)
			}
			var out map[string][][]float32
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 {
				t.Fatalf("a step answered %d outputs: %s", len(out), r.Body)
			}
			got[i] = out["output"][0][0]
		}
		sameBits(t, "/predict", got, want)
	})

	t.Run("state asked for", func(t *testing.T) {
		out := v2Outputs(t, v2Step(s, chunks[0], map[string]any{"sequence_id": 7, "sequence_start": true, "sequence_end": true, "sequence_state": true}))
		if len(out["stateN"]) != 2*128 || math.Float32bits(out["output"][0]) != math.Float32bits(want[0]) {
			t.Errorf("with sequence_state: output %v, %d state elements", out["output"], len(out["stateN"]))
		}
	})

	// 32 sequences at once, each a different stretch of the scene, in
	// steps the server batches across sequences: what is proven (each
	// step's answer is its own sequence's, bit for bit) holds of every
	// step, so each stream is interleavedSteps long rather than the
	// whole scene, which the subtests above stream whole.
	const interleavedSteps = 48
	t.Run("gRPC 32 interleaved", func(t *testing.T) {
		c := grpcClient(t, "127.0.0.1:"+port)
		const n = 32
		var wg sync.WaitGroup
		got := make([][]float32, n)
		wants := make([][]float32, n)
		streams := make([][][]float32, n)
		for k := range streams {
			rotated := append(append([][]float32(nil), chunks[3*k:]...), chunks[:3*k]...)
			streams[k] = rotated[:interleavedSteps]
			wants[k] = referenceProbs(t, p, streams[k])
		}
		errs := make([]error, n)
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, ch := range streams[k] {
					pr, err := grpcStep(context.Background(), c, uint64(1000+k), i == 0, i == len(streams[k])-1, ch)
					if err != nil {
						errs[k] = fmt.Errorf("sequence %d chunk %d: %w", k, i, err)
						return
					}
					got[k] = append(got[k], pr)
				}
			}()
		}
		wg.Wait()
		for k := 0; k < n; k++ {
			if errs[k] != nil {
				t.Fatal(errs[k])
			}
			sameBits(t, fmt.Sprint("gRPC sequence ", k), got[k], wants[k])
		}
	})

	t.Run("metrics and stats", func(t *testing.T) {
		// Every sequence above started and ended: 3 over HTTP of every
		// chunk, one of a single step, 32 over gRPC.
		const sequences = 3 + 32
		steps := float64(2*len(chunks) + 1 + 32*interleavedSteps)
		sc, _ := scrapeMetrics(t, s, textAccept)
		for name, want := range map[string]float64{
			"svc_sequences_active": 0, "svc_sequences_started_total": sequences, "svc_sequences_ended_total": sequences,
			"svc_sequences_expired_total": 0, "svc_sequence_steps_total": steps, "svc_sequence_step_duration_seconds": steps,
		} {
			if got := sc.value(t, name, nil); got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		runs, batched := sc.value(t, "svc_sequence_runs_total", nil), sc.value(t, "svc_sequence_batched_runs_total", nil)
		t.Logf("%v steps in %v runs, %v of them batched across sequences", steps, runs, batched)
		var stats struct {
			ModelStats []struct {
				Seq struct {
					Active                int
					Started, Ended, Steps float64
					Step                  struct{ Count float64 }
				} `json:"sequence_stats"`
			} `json:"model_stats"`
		}
		if err := json.Unmarshal(s.get("/v2/models/vad/stats").Body, &stats); err != nil {
			t.Fatal(err)
		}
		q := stats.ModelStats[0].Seq
		if q.Active != 0 || q.Started != sequences || q.Ended != sequences || q.Steps != steps || q.Step.Count != steps {
			t.Errorf("/v2/models/vad/stats sequence_stats %+v", q)
		}
	})
}

// TestSequenceMisuse sends every misuse of sequences to a real server and
// checks its status and message, and that the next request is served.
func TestSequenceMisuse(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, "vad", "--config", vadConfig(t, "sequence:\n  max_active: 1\n"), "--grpc-port", port)
	chunk := make([]float32, vadChunk)
	ok := func() {
		t.Helper()
		out := v2Outputs(t, v2Step(s, chunk, map[string]any{"sequence_id": "fine", "sequence_start": true, "sequence_end": true}))
		if len(out["output"]) != 1 {
			t.Fatalf("the next request got %v", out)
		}
	}
	tests := []struct {
		name   string
		params map[string]any
		state  bool // send the state input too
		status int
		detail string
	}{
		{name: "unknown id", params: map[string]any{"sequence_id": "nobody"}, status: 400, detail: "sequence 'nobody' is unknown: start it with sequence_start"},
		{name: "start without an id", params: map[string]any{"sequence_start": true}, status: 400, detail: "need parameters.sequence_id"},
		{name: "id of the wrong type", params: map[string]any{"sequence_id": 1.5}, status: 400, detail: "Invalid parameters.sequence_id: expected a string or an unsigned integer"},
		{name: "negative id", params: map[string]any{"sequence_id": -3}, status: 400, detail: "Invalid parameters.sequence_id"},
		{name: "id 0", params: map[string]any{"sequence_id": 0, "sequence_start": true}, status: 400, detail: "0 names no sequence"},
		{name: "start not a bool", params: map[string]any{"sequence_id": "a", "sequence_start": "yes"}, status: 400, detail: "Invalid parameters.sequence_start"},
		{name: "state sent", params: map[string]any{"sequence_id": "a", "sequence_start": true}, state: true, status: 400, detail: "input 'state' is the sequence's state, which svc keeps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs := []map[string]any{
				{"name": "input", "datatype": "FP32", "shape": []int{1, vadChunk}, "data": chunk},
				{"name": "sr", "datatype": "INT64", "shape": []int{}, "data": []int64{vadRate}},
			}
			if tt.state {
				inputs = append(inputs, map[string]any{"name": "state", "datatype": "FP32", "shape": []int{2, 1, 128}, "data": make([]float32, 256)})
			}
			body, _ := json.Marshal(map[string]any{"parameters": tt.params, "inputs": inputs})
			r := s.do(http.MethodPost, "/v2/models/vad/infer", "application/json", strings.NewReader(string(body)))
			var e struct{ Error string }
			_ = json.Unmarshal(r.Body, &e)
			if r.Status != tt.status || !strings.Contains(e.Error, tt.detail) {
				t.Errorf("= %d %s, want %d with %q", r.Status, r.Body, tt.status, tt.detail)
			}
			ok()
		})
	}

	t.Run("ended and max_active", func(t *testing.T) {
		if r := v2Step(s, chunk, map[string]any{"sequence_id": "one", "sequence_start": true}); r.Status != 200 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		r := v2Step(s, chunk, map[string]any{"sequence_id": "two", "sequence_start": true})
		if r.Status != http.StatusTooManyRequests || !strings.Contains(string(r.Body), "1 sequences are active, the most that sequence.max_active allows") {
			t.Errorf("beyond max_active: %d %s", r.Status, r.Body)
		}
		c := grpcClient(t, "127.0.0.1:"+port)
		_, err := grpcStep(context.Background(), c, 2, true, false, chunk)
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("gRPC beyond max_active: %v", err)
		}
		if r := v2Step(s, chunk, map[string]any{"sequence_id": "one", "sequence_end": true}); r.Status != 200 {
			t.Fatalf("end: %d %s", r.Status, r.Body)
		}
		r = v2Step(s, chunk, map[string]any{"sequence_id": "one"})
		if r.Status != 400 || !strings.Contains(string(r.Body), "sequence 'one' is no longer active, ended by its client (sequence_end)") {
			t.Errorf("after its end: %d %s", r.Status, r.Body)
		}
		_, err = grpcStep(context.Background(), c, 99, false, false, chunk)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "sequence '99' is unknown") {
			t.Errorf("gRPC unknown: %v", err)
		}
		ok()
	})

	t.Run("predict headers", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"input": [][]float32{chunk}, "sr": vadRate})
		for _, tt := range []struct {
			headers []string
			status  int
			detail  string
		}{
			{[]string{"X-Sequence-Id", "ghost"}, 400, "sequence 'ghost' is unknown"},
			{[]string{"X-Sequence-Start", "true"}, 400, "need X-Sequence-Id"},
			{[]string{"X-Sequence-Id", "a", "X-Sequence-Start", "maybe"}, 400, "Header X-Sequence-Start must be true or false"},
		} {
			r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(string(body)), tt.headers...)
			if r.Status != tt.status || !strings.Contains(r.Detail(t), tt.detail) {
				t.Errorf("%v = %d %s, want %d with %q", tt.headers, r.Status, r.Body, tt.status, tt.detail)
			}
		}
		ok()
	})
}

// TestSequenceStatelessModel asks a model without state for a sequence.
func TestSequenceStatelessModel(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"input": [[1, 2, 3, 4]]}`), "X-Sequence-Id", "a", "X-Sequence-Start", "true")
	if r.Status != 400 || !strings.Contains(r.Detail(t), "the model has no state to keep between steps") {
		t.Errorf("/predict = %d %s", r.Status, r.Body)
	}
	if r := s.predict(`{"input": [[1, 2, 3, 4]]}`); r.Status != 200 {
		t.Errorf("the next request: %d %s", r.Status, r.Body)
	}
}
