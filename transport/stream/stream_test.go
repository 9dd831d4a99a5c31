package stream

import (
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

func TestScalar(t *testing.T) {
	tests := []struct {
		spec tensor.Spec
		give string
		want any
		err  string
	}{
		{spec: tensor.Spec{Name: "sr", DType: tensor.Int64, Shape: []int64{}}, give: "16000", want: []int64{16000}},
		{spec: tensor.Spec{Name: "sr", DType: tensor.Int32, Shape: []int64{1}}, give: "8000", want: []int32{8000}},
		{spec: tensor.Spec{Name: "t", DType: tensor.Float32, Shape: []int64{-1}}, give: "0.5", want: []float32{0.5}},
		{spec: tensor.Spec{Name: "t", DType: tensor.Float64, Shape: []int64{}}, give: "2e3", want: []float64{2000}},
		{spec: tensor.Spec{Name: "sr", DType: tensor.Int64, Shape: []int64{}}, give: "fast", err: "input 'sr' is int64: 'fast' is not one"},
		{spec: tensor.Spec{Name: "sr", DType: tensor.Int32, Shape: []int64{}}, give: "99999999999", err: "is not one"},
		{spec: tensor.Spec{Name: "v", DType: tensor.Float32, Shape: []int64{3}}, give: "1", err: "only inputs of one element"},
		{spec: tensor.Spec{Name: "b", DType: tensor.Bool, Shape: []int64{}}, give: "1", err: "svc takes int32, int64, float32 or float64"},
	}
	for _, tt := range tests {
		t.Run(tt.spec.Name+"="+tt.give, func(t *testing.T) {
			got, err := scalar(tt.spec, tt.give)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DType != tt.spec.DType || len(got.Shape) != len(tt.spec.Shape) || got.Len() != 1 {
				t.Fatalf("tensor %+v", got)
			}
			switch w := tt.want.(type) {
			case []int64:
				if got.Data.([]int64)[0] != w[0] {
					t.Errorf("%v, want %v", got.Data, w)
				}
			case []int32:
				if got.Data.([]int32)[0] != w[0] {
					t.Errorf("%v, want %v", got.Data, w)
				}
			case []float32:
				if got.Data.([]float32)[0] != w[0] {
					t.Errorf("%v, want %v", got.Data, w)
				}
			case []float64:
				if got.Data.([]float64)[0] != w[0] {
					t.Errorf("%v, want %v", got.Data, w)
				}
			}
		})
	}
}
