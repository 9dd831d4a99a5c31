package core

import (
	"fmt"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// TestWarmUpValuesAreOnes: every element type gets ones (never a divisor's
// zero), dynamic dimensions 1.
func TestWarmUpValuesAreOnes(t *testing.T) {
	tests := []struct {
		dtype tensor.DType
		want  string
	}{
		{tensor.Float32, "[1 1]"},
		{tensor.Float64, "[1 1]"},
		{tensor.Float16, "[15360 15360]"},  // 0x3c00
		{tensor.BFloat16, "[16256 16256]"}, // 0x3f80
		{tensor.Uint16, "[1 1]"},
		{tensor.Int8, "[1 1]"},
		{tensor.Int16, "[1 1]"},
		{tensor.Int32, "[1 1]"},
		{tensor.Int64, "[1 1]"},
		{tensor.Uint8, "[1 1]"},
		{tensor.Uint32, "[1 1]"},
		{tensor.Uint64, "[1 1]"},
		{tensor.Bool, "[true true]"},
		{tensor.String, "[1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.dtype.String(), func(t *testing.T) {
			got, err := onesTensor(tensor.Spec{Name: "x", DType: tt.dtype, Shape: []int64{-1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprint(got.Data); s != tt.want || fmt.Sprint(got.Shape) != "[1 2]" {
				t.Errorf("data %s shape %v, want %s [1 2]", s, got.Shape, tt.want)
			}
		})
	}
}
