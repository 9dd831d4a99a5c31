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

func TestFormatShape(t *testing.T) {
	for _, tt := range []struct {
		give []int64
		want string
	}{{nil, "[]"}, {[]int64{}, "[]"}, {[]int64{7}, "[7]"}, {[]int64{-1, 3, 224, 224}, "[-1, 3, 224, 224]"}, {[]int64{-5, -1, 0}, "[-5, -1, 0]"}} {
		if got := FormatShape(tt.give); got != tt.want {
			t.Errorf("FormatShape(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
