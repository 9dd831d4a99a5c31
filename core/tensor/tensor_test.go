package tensor

import (
	"reflect"
	"testing"
)

func TestSpecSmallestShape(t *testing.T) {
	tests := []struct {
		shape []int64
		want  []int64
		n     int
	}{
		{nil, []int64{}, 1},
		{[]int64{}, []int64{}, 1},
		{[]int64{-1, 3, -1}, []int64{1, 3, 1}, 3},
		{[]int64{0, 3}, []int64{0, 3}, 0}, // a fixed 0 stays 0
		{[]int64{2, 4}, []int64{2, 4}, 8},
	}
	for _, tt := range tests {
		got, n := Spec{Shape: tt.shape}.SmallestShape()
		if !reflect.DeepEqual(got, tt.want) || n != tt.n {
			t.Errorf("SmallestShape(%v) = %v, %d; want %v, %d", tt.shape, got, n, tt.want, tt.n)
		}
	}
}
