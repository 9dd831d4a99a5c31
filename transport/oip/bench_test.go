package oip

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// BenchmarkInfer measures the protocol's own cost (parse, decode, encode;
// the echo runner does no work) for a 1×3×224×224 float32 image sent and
// returned as JSON or as binary data.
func BenchmarkInfer(b *testing.B) {
	data := make([]float32, 3*224*224)
	for i := range data {
		data[i] = float32(i%255)/255 - 0.5
	}
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 3, 224, 224}, Data: data}
	for _, binary := range []bool{false, true} {
		name := "json"
		if binary {
			name = "binary"
		}
		b.Run(name, func(b *testing.B) {
			hd, _ := newTestHandler(b, &imageRunner{}, Options{Limits: transport.Limits{MaxBodyBytes: 64 << 20}})
			h := transport.NewRouter(hd.Routes(), WriteError)
			body, hl, err := EncodeInfer(&InferRequest{Inputs: []InferInput{{Name: "x", Tensor: x, Binary: binary}}, BinaryOutput: binary})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/v2/models/echo/infer", bytes.NewReader(body))
				if hl >= 0 {
					req.Header.Set(HeaderInferenceHeaderLength, strconv.Itoa(hl))
				}
				rec := &discardWriter{h: http.Header{}}
				h.ServeHTTP(rec, req)
				if rec.status != 200 {
					b.Fatalf("status %d", rec.status)
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

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(s int)           { d.status = s }
