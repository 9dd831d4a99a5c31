package grpcapi

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// FuzzDecodeRequest: any ModelInferRequest is decoded or refused with a
// client's gRPC status; never a panic, and a decoded input matches its
// spec.
func FuzzDecodeRequest(f *testing.F) {
	v := &view{View: oip.NewView(&echoRunner{}, nil)}
	fp32, _ := sample(tensor.Float32)
	for _, d := range allDTypes {
		t, c := sample(d)
		typed := &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{
			fp32Input(), {Name: dtName(d), Datatype: Datatype(d), Shape: []int64{2, 2}, Contents: c}}}
		raw := RawRequest("echo", Input{Name: "fp32", Tensor: fp32}, Input{Name: dtName(d), Tensor: t})
		raw.Outputs = []*inference.ModelInferRequest_InferRequestedOutputTensor{{Name: dtName(d) + "_out"}}
		for _, m := range []*inference.ModelInferRequest{typed, raw} {
			b, err := proto.Marshal(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m inference.ModelInferRequest
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		req, err := decodeRequest(&m, v, 1<<16, 1<<10)
		if err != nil {
			if st, known := toStatus(err); !known || st.Code() == codes.Internal {
				t.Fatalf("error without a client status: %v", err)
			}
			return
		}
		for i, in := range req.Inputs() {
			if in == nil {
				continue
			}
			n, cerr := countOf(in.Shape)
			if cerr || in.DType != v.Spec(i).DType || int64(in.Len()) != n {
				t.Fatalf("input %s: %v %v with %d elements", v.Spec(i).Name, in.DType, in.Shape, in.Len())
			}
		}
	})
}

func countOf(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, true
		}
		n *= d
	}
	return n, false
}
