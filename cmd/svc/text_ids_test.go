package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// idRequest is a request of tiny_bert's three id inputs, [1, len(ids)].
type idRequest struct {
	ids, types []int64
}

func (r idRequest) inputs() map[string][]int64 {
	mask := make([]int64, len(r.ids))
	for i := range mask {
		mask[i] = 1
	}
	return map[string][]int64{"input_ids": r.ids, "attention_mask": mask, "token_type_ids": r.types}
}

// idProtocols send an idRequest to the text model name on s (gRPC on
// port) and return the status (HTTP, or the gRPC code's) and the message.
func idProtocols(t *testing.T, s *server, port, name string) map[string]func(idRequest) (int, string) {
	c := grpcClient(t, "127.0.0.1:"+port)
	order := []string{"input_ids", "attention_mask", "token_type_ids"}
	oipInfer := func(binary bool) func(idRequest) (int, string) {
		return func(r idRequest) (int, string) {
			req := &oip.InferRequest{}
			for _, n := range order {
				v := r.inputs()[n]
				req.Inputs = append(req.Inputs, oip.InferInput{Name: n, Binary: binary, Tensor: &tensor.Tensor{DType: tensor.Int64, Shape: []int64{1, int64(len(v))}, Data: v}})
			}
			_, err := s.oipClient().Infer(context.Background(), name, req)
			var se *oip.StatusError
			if errors.As(err, &se) {
				return se.Status, se.Message
			}
			if err != nil {
				t.Fatal(err)
			}
			return http.StatusOK, ""
		}
	}
	return map[string]func(idRequest) (int, string){
		"v1 JSON": func(r idRequest) (int, string) {
			in := map[string][][]int64{}
			for n, v := range r.inputs() {
				in[n] = [][]int64{v}
			}
			body, _ := json.Marshal(in)
			resp := s.predict(string(body))
			if resp.Status == http.StatusOK {
				return resp.Status, ""
			}
			return resp.Status, resp.Detail(t)
		},
		"v2 JSON":   oipInfer(false),
		"v2 binary": oipInfer(true),
		"gRPC": func(r idRequest) (int, string) {
			req := &inference.ModelInferRequest{ModelName: name}
			for _, n := range order {
				v := r.inputs()[n]
				req.Inputs = append(req.Inputs, &inference.ModelInferRequest_InferInputTensor{
					Name: n, Datatype: "INT64", Shape: []int64{1, int64(len(v))},
					Contents: &inference.InferTensorContents{Int64Contents: v},
				})
			}
			_, err := c.Infer(context.Background(), req)
			st, _ := status.FromError(err)
			switch st.Code() {
			case codes.OK:
				return http.StatusOK, ""
			case codes.InvalidArgument:
				return http.StatusBadRequest, st.Message()
			}
			return http.StatusInternalServerError, st.Message()
		},
	}
}

// zeros is n zeros.
func zeros(n int) []int64 { return make([]int64, n) }

// TestTextIDBounds: token ids a client sends as tensors to a text model
// (tiny_bert: 444 word rows, 2 token types, 128 positions) that the model
// cannot gather are a 400 naming the input, the value, its place and the
// bound, in every protocol (ONNX Runtime's Gather failed with a 500, and
// took a negative id from the end of the table); ids at the bounds run.
func TestTextIDBounds(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	dir := textFolder(t, "")
	s := startServer(t, dir, "--grpc-port", port)
	protocols := idProtocols(t, s, port, filepath.Base(dir))
	long := zeros(129)
	atBounds := zeros(128)
	atBounds[127] = 443
	typesAtBounds := zeros(128)
	typesAtBounds[5] = 1
	tests := []struct {
		name string
		req  idRequest
		want string // "" for a 200
	}{
		{"an id past the vocabulary", idRequest{[]int64{440, 9999, 441}, zeros(3)}, "Input 'input_ids' at [0, 1]: id 9999 is out of the vocabulary: the model takes 0 to 443 (its word embeddings have 444 rows)"},
		{"the first id past it", idRequest{[]int64{440, 444}, zeros(2)}, "Input 'input_ids' at [0, 1]: id 444 is out of the vocabulary"},
		{"a negative id", idRequest{[]int64{440, 17, -1}, zeros(3)}, "Input 'input_ids' at [0, 2]: id -1 is out of the vocabulary: the model takes 0 to 443"},
		{"a token type past the table", idRequest{[]int64{440, 17}, []int64{0, 2}}, "Input 'token_type_ids' at [0, 1]: token type 2 is out of range: the model takes 0 to 1 (its token-type embeddings have 2 rows)"},
		{"a negative token type", idRequest{[]int64{440, 17}, []int64{-1, 0}}, "Input 'token_type_ids' at [0, 0]: token type -1 is out of range"},
		{"more tokens than positions", idRequest{long, zeros(129)}, "Input 'input_ids' has 129 tokens per text (shape [1, 129]): the model has 128 positions (its position embeddings have 128 rows)"},
		{"at the bounds", idRequest{atBounds, typesAtBounds}, ""},
	}
	for _, tt := range tests {
		for proto, send := range protocols {
			t.Run(tt.name+", "+proto, func(t *testing.T) {
				code, msg := send(tt.req)
				want := http.StatusBadRequest
				if tt.want == "" {
					want = http.StatusOK
				}
				if code != want || !strings.Contains(msg, tt.want) {
					t.Fatalf("%d %q, want %d saying %q", code, msg, want, tt.want)
				}
			})
		}
	}
}
