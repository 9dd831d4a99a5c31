package decode

import (
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// FuzzDecode: Classifier.Decode and CTC.Decode never panic, whatever the
// shape, the data's length and the settings; when they succeed, the
// result has an entry per item.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{2, 3}, 6, 1, 0, false)
	f.Add([]byte{1, 1, 5}, 5, 9, -1, true)
	f.Add([]byte{0, 7}, 0, 2, 0, false)
	f.Add([]byte{1, 4, 4}, 16, 40, 2, true)
	f.Fuzz(func(t *testing.T, dims []byte, n, k, blank int, softmax bool) {
		if len(dims) > 4 || n < 0 || n > 1<<12 {
			return
		}
		shape := make([]int64, len(dims))
		for i, d := range dims {
			shape[i] = int64(int8(d)) // negative dimensions too
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(i%7) - 3
		}
		tt := &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: data}
		if got, err := (Classifier{Softmax: softmax, TopK: k, Labels: []string{"a"}}).Decode(tt); err == nil {
			for _, item := range got {
				if len(item) != min(max(k, 1), int(shape[len(shape)-1])) {
					t.Errorf("shape %v, TopK %d: item of %d classes", shape, k, len(item))
				}
			}
		}
		labels := make([]string, k&0x0f)
		got, err := (CTC{Labels: labels, Blank: blank, Softmax: softmax}).Decode(tt)
		if err == nil && len(shape) == 3 && len(got) != int(shape[0]) {
			t.Errorf("shape %v: %d texts", shape, len(got))
		}
	})
}
