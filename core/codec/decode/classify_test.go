package decode

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

func f32(shape []int64, data ...float32) *tensor.Tensor {
	return &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: data}
}

func TestClassifierDecode(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	abc := []string{"a", "b", "c"}
	tests := []struct {
		name string
		c    Classifier
		t    *tensor.Tensor
		want [][]Class
	}{
		{
			name: "top 1 by default",
			c:    Classifier{Labels: abc},
			t:    f32([]int64{2, 3}, 0.1, 0.7, 0.2, 0.5, 0.25, 0.25),
			want: [][]Class{{{"b", 1, float64(float32(0.7))}}, {{"a", 0, 0.5}}},
		},
		{
			name: "negative TopK is 1",
			c:    Classifier{TopK: -3, Labels: abc},
			t:    f32([]int64{1, 3}, 0.1, 0.7, 0.2),
			want: [][]Class{{{"b", 1, float64(float32(0.7))}}},
		},
		{
			name: "TopK beyond C is C",
			c:    Classifier{TopK: 10, Labels: abc},
			t:    f32([]int64{1, 3}, 0.25, 0.5, 0.125),
			want: [][]Class{{{"b", 1, 0.5}, {"a", 0, 0.25}, {"c", 2, 0.125}}},
		},
		{
			name: "ties by lower index, -0 equals 0",
			c:    Classifier{TopK: 4},
			t:    f32([]int64{4}, 0, 1, float32(math.Copysign(0, -1)), 1),
			want: [][]Class{{{"1", 1, 1}, {"3", 3, 1}, {"0", 0, 0}, {"2", 2, math.Copysign(0, -1)}}},
		},
		{
			name: "NaN last, ties among NaN by index",
			c:    Classifier{TopK: 4, Labels: abc},
			t:    f32([]int64{4}, nan, -1, nan, -2),
			want: [][]Class{{{"b", 1, -1}, {"3", 3, -2}, {"a", 0, math.NaN()}, {"c", 2, math.NaN()}}},
		},
		{
			name: "labels shorter than C",
			c:    Classifier{TopK: 2, Labels: []string{"猫"}},
			t:    f32([]int64{1, 1, 3}, 0.5, 0.25, 0.75),
			want: [][]Class{{{"2", 2, 0.75}, {"猫", 0, 0.5}}},
		},
		{
			name: "[C] is one item",
			c:    Classifier{Labels: abc},
			t:    f32([]int64{3}, 1, 3, 2),
			want: [][]Class{{{"b", 1, 3}}},
		},
		{
			name: "[N, 1, C] squeezed",
			c:    Classifier{Labels: abc},
			t:    f32([]int64{2, 1, 3}, 1, 3, 2, 9, 8, 7),
			want: [][]Class{{{"b", 1, 3}}, {{"a", 0, 9}}},
		},
		{
			name: "softmax of large logits",
			c:    Classifier{Softmax: true, TopK: 3},
			t:    f32([]int64{2, 3}, 1000, 1000, 900, 1e30, 0, 1e30),
			want: [][]Class{{{"0", 0, 0.5}, {"1", 1, 0.5}, {"2", 2, math.Exp(-100) / (2 + math.Exp(-100))}}, {{"0", 0, 0.5}, {"2", 2, 0.5}, {"1", 1, 0}}},
		},
		{
			name: "softmax of very negative logits",
			c:    Classifier{Softmax: true, TopK: 2},
			t:    f32([]int64{2}, -1e30, -1e30),
			want: [][]Class{{{"0", 0, 0.5}, {"1", 1, 0.5}}},
		},
		{
			name: "softmax keeps NaN out",
			c:    Classifier{Softmax: true, TopK: 3},
			t:    f32([]int64{3}, 5, nan, 5),
			want: [][]Class{{{"0", 0, 0.5}, {"2", 2, 0.5}, {"1", 1, math.NaN()}}},
		},
		{
			name: "softmax with +Inf",
			c:    Classifier{Softmax: true, TopK: 3},
			t:    f32([]int64{3}, inf, 7, inf),
			want: [][]Class{{{"0", 0, 0.5}, {"2", 2, 0.5}, {"1", 1, 0}}},
		},
		{
			name: "softmax with all -Inf",
			c:    Classifier{Softmax: true, TopK: 2},
			t:    f32([]int64{2}, -inf, -inf),
			want: [][]Class{{{"0", 0, 0.5}, {"1", 1, 0.5}}},
		},
		{
			name: "float16",
			c:    Classifier{TopK: 2, Labels: abc},
			t: &tensor.Tensor{DType: tensor.Float16, Shape: []int64{1, 3},
				Data: []uint16{tensor.Float32ToFloat16(0.25), tensor.Float32ToFloat16(-2), tensor.Float32ToFloat16(1.5)}},
			want: [][]Class{{{"c", 2, 1.5}, {"a", 0, 0.25}}},
		},
		{
			name: "bfloat16",
			c:    Classifier{Labels: abc},
			t: &tensor.Tensor{DType: tensor.BFloat16, Shape: []int64{3},
				Data: []uint16{tensor.Float32ToBFloat16(0.25), tensor.Float32ToBFloat16(3), tensor.Float32ToBFloat16(1.5)}},
			want: [][]Class{{{"b", 1, 3}}},
		},
		{
			name: "float64",
			c:    Classifier{Labels: abc},
			t:    &tensor.Tensor{DType: tensor.Float64, Shape: []int64{3}, Data: []float64{0.1, 0.2, 0.3}},
			want: [][]Class{{{"c", 2, 0.3}}},
		},
		{
			name: "int64 scores",
			c:    Classifier{TopK: 2, Labels: abc},
			t:    &tensor.Tensor{DType: tensor.Int64, Shape: []int64{3}, Data: []int64{-5, 7, 3}},
			want: [][]Class{{{"b", 1, 7}, {"c", 2, 3}}},
		},
		{
			name: "uint16 is not half",
			c:    Classifier{Labels: abc},
			t:    &tensor.Tensor{DType: tensor.Uint16, Shape: []int64{3}, Data: []uint16{1, 60000, 2}},
			want: [][]Class{{{"b", 1, 60000}}},
		},
		{
			name: "N = 0",
			c:    Classifier{},
			t:    f32([]int64{0, 1000}),
			want: [][]Class{},
		},
		{
			name: "N = 0 and C = 0",
			c:    Classifier{},
			t:    f32([]int64{0, 0}),
			want: [][]Class{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Decode(tt.t)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !classesEqual(got, tt.want) {
				t.Errorf("Decode = %v, want %v", got, tt.want)
			}
		})
	}
}

// classesEqual compares exactly, NaN equal to NaN and -0 unequal to 0.
func classesEqual(a, b [][]Class) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j, x := range a[i] {
			y := b[i][j]
			if x.Label != y.Label || x.Index != y.Index ||
				math.Float64bits(x.Score) != math.Float64bits(y.Score) && !(math.IsNaN(x.Score) && math.IsNaN(y.Score)) {
				return false
			}
		}
	}
	return true
}

func TestClassifierDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		t    *tensor.Tensor
		want string
	}{
		{"nil tensor", nil, "classify: no output tensor"},
		{"rank 3 not [N, 1, C]", f32([]int64{1, 2, 3}, 1, 2, 3, 4, 5, 6),
			"classify: output of shape [1, 2, 3] is not a list of class scores: want [N, C], [C] or [N, 1, C]"},
		{"rank 4", f32([]int64{1, 1, 1, 2}, 1, 2), "output of shape [1, 1, 1, 2] is not a list"},
		{"scalar", f32([]int64{}, 1), "output of shape [] is not a list"},
		{"short data", f32([]int64{2, 3}, 1, 2, 3), "classify: output of shape [2, 3] holds 3 values, want 6"},
		{"long data", f32([]int64{1}, 1, 2), "holds 2 values, want 1"},
		{"negative dimension", f32([]int64{-1, 3}, 1, 2, 3), "output shape [-1, 3] has a negative dimension"},
		{"overflowing shape", f32([]int64{1 << 40, 1 << 40, 0}), "output shape [1099511627776, 1099511627776, 0] is too large"},
		{"no classes", f32([]int64{2, 0}), "classify: output of shape [2, 0] has no classes"},
		{"strings", &tensor.Tensor{DType: tensor.String, Shape: []int64{1}, Data: []string{"x"}}, "output of type string holds no scores"},
		{"wrong Go type", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1}, Data: []float64{1}}, "output of type float32 holds []float64 data"},
		{"nil data", &tensor.Tensor{DType: tensor.Float16, Shape: []int64{1}}, "output of type float16 holds <nil> data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classifier{TopK: 3}.Decode(tt.t)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode = %v, %v; want an error with %q", got, err, tt.want)
			}
		})
	}
}

// TestTopKPaths: the sort used for large k orders as the insertion for
// small k does.
func TestTopKPaths(t *testing.T) {
	row := make([]float64, 200)
	for i := range row {
		switch i % 7 {
		case 0:
			row[i] = math.NaN()
		case 1:
			row[i] = 0.5
		default:
			row[i] = float64((i*37)%101) / 100
		}
	}
	sorted := append([]int(nil), topK(make([]int, len(row)), row, len(row))...)
	for k := 1; k <= sortAbove; k++ {
		got := topK(nil, row, k)
		if !reflect.DeepEqual(got, sorted[:k]) {
			t.Fatalf("k=%d: insertion %v, sort %v", k, got, sorted[:k])
		}
	}
	for i := 1; i < len(sorted); i++ {
		if !before(row, sorted[i-1], sorted[i]) {
			t.Fatalf("sorted[%d]=%d (%v) is not before sorted[%d]=%d (%v)", i-1, sorted[i-1], row[sorted[i-1]], i, sorted[i], row[sorted[i]])
		}
	}
	got, err := Classifier{TopK: 100}.Decode(&tensor.Tensor{DType: tensor.Float64, Shape: []int64{200}, Data: row})
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range got[0] {
		if c.Index != sorted[j] {
			t.Fatalf("Decode with TopK 100: class %d is %d, want %d", j, c.Index, sorted[j])
		}
	}
}
