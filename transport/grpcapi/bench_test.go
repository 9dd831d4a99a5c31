package grpcapi

import (
	"context"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// BenchmarkInfer measures the protocol's own cost over a local connection
// (encode, HTTP/2, decode, both ways; the runner does no work) for a
// 1×3×224×224 float32 image sent and returned raw or as typed contents.
func BenchmarkInfer(b *testing.B) {
	data := make([]float32, 3*224*224)
	for i := range data {
		data[i] = float32(i%255)/255 - 0.5
	}
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 3, 224, 224}, Data: data}
	for _, raw := range []bool{false, true} {
		name := "typed"
		req := RawRequest("echo", Input{Name: "x", Tensor: x})
		if raw {
			name = "raw"
		} else {
			req.RawInputContents = nil
			req.Inputs[0].Contents = &inference.InferTensorContents{Fp32Contents: data}
		}
		b.Run(name, func(b *testing.B) {
			f := start(b, &imageRunner{}, Options{}, ServerOptions{MaxMessageBytes: 64 << 20})
			b.SetBytes(int64(len(data) * 4))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.client.Infer(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// imageRunner echoes an FP32 [-1, 3, -1, -1] input "x" as "y".
type imageRunner struct{}

func (*imageRunner) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 3, -1, -1}, Required: true}}
}

func (r *imageRunner) Info() core.ModelInfo {
	return core.ModelInfo{Name: "echo", Version: "1",
		Inputs:  []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 3, -1, -1}, Required: true, Kind: core.KindTensor}},
		Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, 3, -1, -1}, Kind: core.KindTensor}}}
}

func (r *imageRunner) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	return core.NewResult([]*tensor.Tensor{in[0]}), nil
}
