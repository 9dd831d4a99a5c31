package decode

import (
	"math"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// steps builds a [N, T, C] float32 tensor whose step s of item i puts p on
// class seq[i][s] and spreads the rest evenly over the other classes.
func steps(classes int, p float32, seq ...[]int) *tensor.Tensor {
	n, T := len(seq), 0
	if n > 0 {
		T = len(seq[0])
	}
	data := make([]float32, 0, n*T*classes)
	rest := (1 - p) / float32(classes-1)
	for _, item := range seq {
		for _, c := range item {
			for j := range classes {
				if j == c {
					data = append(data, p)
				} else {
					data = append(data, rest)
				}
			}
		}
	}
	return f32([]int64{int64(n), int64(T), int64(classes)}, data...)
}

func ptr[T any](v T) *T { return &v }

func TestCTCDecode(t *testing.T) {
	ab := []string{"a", "b"} // blank 0, a 1, b 2, (space 3)
	p := float32(0.75)
	score := float64(p)
	tests := []struct {
		name string
		c    CTC
		t    *tensor.Tensor
		want []Text
	}{
		{
			name: "repeats collapse before blanks drop",
			c:    CTC{Labels: ab},
			t:    steps(3, p, []int{1, 1, 0, 2, 2}, []int{1, 0, 1, 0, 0}),
			want: []Text{{"ab", score}, {"aa", score}},
		},
		{
			name: "leading and trailing blanks, all blanks",
			c:    CTC{Labels: ab},
			t:    steps(3, p, []int{0, 2, 0, 0}, []int{0, 0, 0, 0}),
			want: []Text{{"b", score}, {"", 0}},
		},
		{
			name: "space detected from C = labels + 2",
			c:    CTC{Labels: ab},
			t:    steps(4, p, []int{1, 3, 2, 3, 3}),
			want: []Text{{"a b ", score}},
		},
		{
			name: "no space from C = labels + 1",
			c:    CTC{Labels: []string{"a", "b", "c"}},
			t:    steps(4, p, []int{1, 3, 2}),
			want: []Text{{"acb", score}},
		},
		{
			name: "explicit space",
			c:    CTC{Labels: ab, Space: ptr(true)},
			t:    steps(4, p, []int{3, 1}),
			want: []Text{{" a", score}},
		},
		{
			name: "explicit no space",
			c:    CTC{Labels: []string{"a", "b", "c"}, Space: ptr(false)},
			t:    steps(4, p, []int{3}),
			want: []Text{{"c", score}},
		},
		{
			name: "blank last",
			c:    CTC{Labels: ab, Blank: -1},
			t:    steps(3, p, []int{0, 2, 1, 1, 2, 0}),
			want: []Text{{"aba", score}},
		},
		{
			name: "blank in the middle",
			c:    CTC{Labels: ab, Blank: 1},
			t:    steps(3, p, []int{0, 1, 2, 0}),
			want: []Text{{"aba", score}},
		},
		{
			name: "Chinese labels",
			c:    CTC{Labels: []string{"中", "文", "字"}},
			t:    steps(5, p, []int{1, 1, 2, 0, 2, 4, 3}),
			want: []Text{{"中文文 字", score}},
		},
		{
			name: "score is the mean of the kept steps' maxima",
			c:    CTC{Labels: ab},
			t: f32([]int64{1, 4, 3},
				0.1, 0.5, 0.4, // a 0.5
				0.1, 0.125, 0.775, // b (kept: first of its run)
				0.1, 0.1, 0.8, // b repeated, not kept
				0.9, 0.05, 0.05), // blank
			want: []Text{{"ab", (float64(float32(0.5)) + float64(float32(0.775))) / 2}},
		},
		{
			name: "softmax of logits for the score",
			c:    CTC{Labels: ab, Softmax: true},
			t:    f32([]int64{1, 2, 3}, 1e30, 0, 1e30, -5, 100, 100),
			want: []Text{{"a", 0.5}},
		},
		{
			name: "ties to the lower index, NaN step as blank",
			c:    CTC{Labels: ab},
			t: f32([]int64{1, 4, 3},
				0.25, 0.5, 0.5, // a
				float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), // blank
				float32(math.NaN()), 0.5, 0.25, // a
				0.1, 0.2, 0.3), // b
			want: []Text{{"aab", (0.5 + 0.5 + float64(float32(0.3))) / 3}},
		},
		{
			name: "[T, C] is one item",
			c:    CTC{Labels: ab},
			t:    f32([]int64{2, 3}, 0, 1, 0, 0, 0, 1),
			want: []Text{{"ab", 1}},
		},
		{
			name: "float16",
			c:    CTC{Labels: ab},
			t: &tensor.Tensor{DType: tensor.Float16, Shape: []int64{1, 2, 3}, Data: []uint16{
				tensor.Float32ToFloat16(0), tensor.Float32ToFloat16(0.75), tensor.Float32ToFloat16(0.25),
				tensor.Float32ToFloat16(0), tensor.Float32ToFloat16(0.25), tensor.Float32ToFloat16(0.5)}},
			want: []Text{{"ab", 0.625}},
		},
		{
			name: "N = 0",
			c:    CTC{Labels: ab},
			t:    f32([]int64{0, 40, 3}),
			want: []Text{},
		},
		{
			name: "T = 0",
			c:    CTC{Labels: ab},
			t:    f32([]int64{2, 0, 3}),
			want: []Text{{}, {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Decode(tt.t)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != len(tt.want) {
				t.Fatalf("Decode = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("item %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCTCDecodeErrors(t *testing.T) {
	ab := []string{"a", "b"}
	tests := []struct {
		name string
		c    CTC
		t    *tensor.Tensor
		want string
	}{
		{"C too small", CTC{Labels: ab}, f32([]int64{1, 1, 2}, 1, 0),
			"ctc: the output has 2 classes, want 3 (blank and 2 labels) or 4 (blank, 2 labels and a space)"},
		{"C too large", CTC{Labels: ab}, f32([]int64{0, 1, 5}),
			"ctc: the output has 5 classes, want 3 (blank and 2 labels) or 4 (blank, 2 labels and a space)"},
		{"explicit space, no room", CTC{Labels: ab, Space: ptr(true)}, f32([]int64{1, 1, 3}, 1, 0, 0),
			"ctc: the output has 3 classes, want 4 (blank, 2 labels and a space)"},
		{"explicit no space, room for one", CTC{Labels: ab, Space: ptr(false)}, f32([]int64{1, 1, 4}, 1, 0, 0, 0),
			"ctc: the output has 4 classes, want 3 (blank and 2 labels)"},
		{"blank out of range", CTC{Labels: ab, Blank: 3}, f32([]int64{1, 1, 3}, 1, 0, 0),
			"ctc: blank index 3 is outside the 3 classes"},
		{"negative blank out of range", CTC{Labels: ab, Blank: -4}, f32([]int64{1, 1, 3}, 1, 0, 0),
			"ctc: blank index -4 is outside the 3 classes"},
		{"rank 4", CTC{Labels: ab}, f32([]int64{1, 1, 1, 3}, 1, 0, 0),
			"ctc: output of shape [1, 1, 1, 3] is not a sequence of class scores: want [N, T, C] or [T, C]"},
		{"rank 1", CTC{Labels: ab}, f32([]int64{3}, 1, 0, 0), "is not a sequence"},
		{"short data", CTC{Labels: ab}, f32([]int64{1, 2, 3}, 1, 0, 0), "ctc: output of shape [1, 2, 3] holds 3 values, want 6"},
		{"bool", CTC{Labels: ab}, &tensor.Tensor{DType: tensor.Bool, Shape: []int64{1}, Data: []bool{true}}, "ctc: output of type bool holds no scores"},
		{"nil", CTC{Labels: ab}, nil, "ctc: no output tensor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Decode(tt.t)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode = %v, %v; want an error with %q", got, err, tt.want)
			}
		})
	}
}
