package session_test

import (
	"context"
	"testing"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

func BenchmarkPredictTiny(b *testing.B) {
	p, err := session.New(session.Options{Name: "m", File: model("classifier.onnx"), Runtime: config.Runtime{IntraOpThreads: 1}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{1, 2, 3, 4}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		res, err := p.Predict(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		res.Release()
	}
}

func BenchmarkPredictPooled(b *testing.B) {
	p, err := session.New(session.Options{Name: "m", File: model("classifier.onnx"), Runtime: config.Runtime{IntraOpThreads: 1}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	n := 4096
	data := make([]float32, n*4)
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{int64(n), 4}, Data: data}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		res, err := p.Predict(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		res.Release()
	}
}
