package main_test

import (
	"context"
	"math"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// streamRequest is one chunk for ModelStreamInfer; id "" leaves the
// sequence to the stream.
func streamRequest(chunk []float32, id string, start, end bool) *inference.ModelInferRequest {
	req := grpcapi.RawRequest("vad",
		grpcapi.Input{Name: "input", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, int64(len(chunk))}, Data: chunk}},
		grpcapi.Input{Name: "sr", Tensor: &tensor.Tensor{DType: tensor.Int64, Shape: []int64{}, Data: []int64{vadRate}}},
	)
	req.Parameters = map[string]*inference.InferParameter{}
	if id != "" {
		req.Parameters["sequence_id"] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: id}}
	}
	if start {
		req.Parameters["sequence_start"] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: true}}
	}
	if end {
		req.Parameters["sequence_end"] = &inference.InferParameter{ParameterChoice: &inference.InferParameter_BoolParam{BoolParam: true}}
	}
	return req
}

// streamProb reads the next answer of a stream: its probability, or its
// error_message.
func streamProb(t *testing.T, st inference.GRPCInferenceService_ModelStreamInferClient) (float32, string) {
	t.Helper()
	resp, err := st.Recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	if resp.GetErrorMessage() != "" {
		return 0, resp.GetErrorMessage()
	}
	outs, err := grpcapi.Outputs(resp.GetInferResponse())
	if err != nil {
		t.Fatal(err)
	}
	return outs[0].Data.([]float32)[0], ""
}

// TestSequenceGRPCStream streams the speech over ModelStreamInfer: as the
// stream's own sequence (no ids), and as two sequences named on one
// stream; a failed request is answered on the stream, which goes on; and
// SIGTERM ends an open stream with UNAVAILABLE saying why.
func TestSequenceGRPCStream(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, "vad", "--config", vadConfig(t, ""), "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	p := vadSession(t)
	chunks := testScene(t, 1).chunks()
	want := referenceProbs(t, p, chunks)
	ctx := context.Background()

	t.Run("the stream's own sequence", func(t *testing.T) {
		st, err := c.Service().ModelStreamInfer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(chunks))
		for i, ch := range chunks {
			if err := st.Send(streamRequest(ch, "", false, false)); err != nil {
				t.Fatal(err)
			}
			var msg string
			if got[i], msg = streamProb(t, st); msg != "" {
				t.Fatalf("chunk %d: %s", i, msg)
			}
		}
		sameBits(t, "stream", got, want)
		// sequence_end ends it; the next request starts a new one.
		if err := st.Send(streamRequest(chunks[0], "", false, true)); err != nil {
			t.Fatal(err)
		}
		streamProb(t, st)
		if err := st.Send(streamRequest(chunks[0], "", false, false)); err != nil {
			t.Fatal(err)
		}
		if pr, msg := streamProb(t, st); msg != "" || pr != want[0] {
			t.Errorf("after sequence_end the stream's next sequence answered %v %q, want the first chunk's %v", pr, msg, want[0])
		}
		if err := st.CloseSend(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("named sequences and errors on one stream", func(t *testing.T) {
		st, err := c.Service().ModelStreamInfer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer st.CloseSend()
		const n = 40
		a, b := make([]float32, n), make([]float32, n)
		for i := 0; i < n; i++ {
			for _, x := range []struct {
				id  string
				out []float32
			}{{"left", a}, {"right", b}} {
				if err := st.Send(streamRequest(chunks[i], x.id, i == 0, false)); err != nil {
					t.Fatal(err)
				}
				var msg string
				if x.out[i], msg = streamProb(t, st); msg != "" {
					t.Fatalf("%s chunk %d: %s", x.id, i, msg)
				}
			}
		}
		sameBits(t, "left", a, want[:n])
		sameBits(t, "right", b, want[:n])
		if err := st.Send(streamRequest(chunks[0], "nobody", false, false)); err != nil {
			t.Fatal(err)
		}
		if _, msg := streamProb(t, st); msg != "sequence 'nobody' is unknown: start it with sequence_start" {
			t.Errorf("unknown sequence on the stream: %q", msg)
		}
		if err := st.Send(streamRequest(chunks[n], "left", false, false)); err != nil {
			t.Fatal(err)
		}
		if pr, msg := streamProb(t, st); msg != "" || pr != want[n] {
			t.Errorf("after an error the stream answered %v %q, want %v", pr, msg, want[n])
		}
	})

	t.Run("SIGTERM with steps in flight", func(t *testing.T) {
		// Every chunk is sent at once, without waiting for answers, so
		// that steps are queued and running when SIGTERM comes. Whatever
		// their number, the steps answered are the first ones, in order,
		// each exact; then the stream ends with UNAVAILABLE and why.
		st, err := c.Service().ModelStreamInfer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			for _, ch := range chunks {
				if st.Send(streamRequest(ch, "", false, false)) != nil {
					return // the stream has ended
				}
			}
		}()
		first, msg := streamProb(t, st)
		if msg != "" || math.Float32bits(first) != math.Float32bits(want[0]) {
			t.Fatalf("first step: %v %q, want %v", first, msg, want[0])
		}
		code := make(chan int, 1)
		go func() { code <- s.stop(syscall.SIGTERM) }()
		answered := 1
		for {
			resp, err := st.Recv()
			if err != nil {
				if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "the server is stopping: the stream ends") {
					t.Errorf("after %d steps the stream ended with %v, want UNAVAILABLE: the server is stopping", answered, err)
				}
				break
			}
			if resp.GetErrorMessage() != "" {
				t.Fatalf("step %d: %s", answered, resp.GetErrorMessage())
			}
			outs, err := grpcapi.Outputs(resp.GetInferResponse())
			if err != nil {
				t.Fatal(err)
			}
			if got := outs[0].Data.([]float32)[0]; answered >= len(want) || math.Float32bits(got) != math.Float32bits(want[answered]) {
				t.Fatalf("step %d answered %v, want the chunk's own %v", answered, got, want[min(answered, len(want)-1)])
			}
			answered++
		}
		t.Logf("%d of %d steps answered before the stream ended", answered, len(chunks))
		if c := <-code; c != 0 {
			t.Errorf("exit code %d\n%s", c, s.stderr)
		}
		<-sent
	})
}
