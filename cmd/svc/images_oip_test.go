package main_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// TestImagesOIP sends pictures to PaddleOCR cls and rec over the Open
// Inference Protocol, REST (JSON and binary) and gRPC: an image input is
// BYTES [N]; a classify output answers BYTES [N, k] "score:index:label",
// a ctc output BYTES [N] texts; parameters.raw answers the tensors; a bad
// picture is a 400 or InvalidArgument.
func TestImagesOIP(t *testing.T) {
	t.Parallel()
	sequential(t)
	dir, _ := renderLines(t)
	cfg := ocrConfig(t)
	port := freePort(t)
	s := startServer(t, "cls", "--config", cfg, "--grpc-port", port)
	up, err := os.ReadFile(filepath.Join(dir, "3.png"))
	if err != nil {
		t.Fatal(err)
	}
	down, _ := os.ReadFile(filepath.Join(dir, "3-180.jpg"))
	pictures := &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{string(up), string(down)}}
	ctx := context.Background()

	mm, err := s.oipClient().ModelMetadata(ctx, "cls")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mm.Inputs, []oip.TensorMetadata{{Name: "x", Datatype: "BYTES", Shape: []int64{-1}}}) ||
		!reflect.DeepEqual(mm.Outputs, []oip.TensorMetadata{{Name: "softmax_0.tmp_0", Datatype: "BYTES", Shape: []int64{-1, 1}}}) {
		t.Fatalf("metadata: %+v", mm)
	}

	// JSON carries the pictures' base64, binary data the files.
	encoded := &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{b64(up), b64(down)}}
	for _, binary := range []bool{false, true} {
		in := oip.InferInput{Name: "x", Tensor: encoded}
		if binary {
			in = oip.InferInput{Name: "x", Tensor: pictures, Binary: true}
		}
		res, err := s.oipClient().Infer(ctx, "cls", &oip.InferRequest{Inputs: []oip.InferInput{in}, BinaryOutput: binary})
		if err != nil {
			t.Fatalf("binary %v: %v", binary, err)
		}
		o := res.Output("softmax_0.tmp_0")
		if o == nil || o.DType != tensor.String || !reflect.DeepEqual(o.Shape, []int64{2, 1}) {
			t.Fatalf("binary %v: output %+v", binary, o)
		}
		got := o.Data.([]string)
		if !strings.HasSuffix(got[0], ":0:0") || !strings.HasSuffix(got[1], ":1:180") {
			t.Fatalf("binary %v: classes %q", binary, got)
		}
	}

	// REST JSON carries base64; parameters.raw answers the scores.
	r := s.do(http.MethodPost, "/v2/models/cls/infer", "application/json", strings.NewReader(
		`{"parameters": {"raw": true}, "inputs": [{"name": "x", "datatype": "BYTES", "shape": [1], "data": ["`+b64(up)+`"]}]}`))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"datatype":"FP32","shape":[1,2]`) {
		t.Fatalf("raw: %d %s", r.Status, r.Body)
	}
	r = s.do(http.MethodPost, "/v2/models/cls/infer", "application/json", strings.NewReader(
		`{"inputs": [{"name": "x", "datatype": "BYTES", "shape": [2], "data": ["`+b64(up)+`", "bm90IGFuIGltYWdl"]}]}`))
	if r.Status != http.StatusBadRequest || !strings.Contains(oipError(t, r), "item 1") {
		t.Fatalf("bad picture: %d %s", r.Status, r.Body)
	}

	// gRPC: bytes_contents and raw_input_contents alike.
	c := grpcClient(t, "127.0.0.1:"+port)
	req := &inference.ModelInferRequest{ModelName: "cls", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "x", Datatype: "BYTES", Shape: []int64{2},
		Contents: &inference.InferTensorContents{BytesContents: [][]byte{up, down}},
	}}}
	resp, err := c.Infer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	out := resp.GetOutputs()[0]
	if out.GetDatatype() != "BYTES" || !reflect.DeepEqual(out.GetShape(), []int64{2, 1}) {
		t.Fatalf("gRPC output %v", out)
	}
	if got := out.GetContents().GetBytesContents(); len(got) != 2 || !strings.HasSuffix(string(got[0]), ":0:0") || !strings.HasSuffix(string(got[1]), ":1:180") {
		t.Fatalf("gRPC classes %q", got)
	}
	req.Inputs[0].Contents.BytesContents[1] = []byte("not an image")
	_, err = c.Infer(ctx, req)
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "item 1") {
		t.Fatalf("gRPC bad picture: %v", err)
	}
	req.Inputs[0].Contents.BytesContents[1] = down
	if _, err := c.Infer(ctx, req); err != nil {
		t.Fatalf("after a bad picture: %v", err)
	}
}

// TestImagesOIPRec reads a text line over gRPC: the ctc output is BYTES
// [N] holding the text.
func TestImagesOIPRec(t *testing.T) {
	t.Parallel()
	sequential(t)
	dir, lines := renderLines(t)
	port := freePort(t)
	startServer(t, "rec", "--config", ocrConfig(t), "--grpc-port", port)
	pic, err := os.ReadFile(filepath.Join(dir, "11.webp"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := grpcClient(t, "127.0.0.1:"+port).Infer(context.Background(), &inference.ModelInferRequest{ModelName: "rec",
		Inputs:           []*inference.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "BYTES", Shape: []int64{1}}},
		RawInputContents: [][]byte{append([]byte{byte(len(pic)), byte(len(pic) >> 8), byte(len(pic) >> 16), byte(len(pic) >> 24)}, pic...)},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := resp.GetOutputs()[0]
	if out.GetDatatype() != "BYTES" || !reflect.DeepEqual(out.GetShape(), []int64{1}) {
		t.Fatalf("output %v", out)
	}
	var text string
	if raw := resp.GetRawOutputContents(); len(raw) == 1 && len(raw[0]) > 4 {
		text = string(raw[0][4:])
	} else if b := out.GetContents().GetBytesContents(); len(b) == 1 {
		text = string(b[0])
	}
	if d := editDistance(lines[11], text); d > 2 {
		t.Fatalf("read %q, want %q", text, lines[11])
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
