package codec

import (
	"math"

	"github.com/svc-dev/svc/core/config"
)

// pool writes into dst the pooling of one text's hidden states h, [S, H]
// flattened, over the tokens that mask keeps: their mean (accumulated in
// float64), their maximum, or the first token's (cls).
func pool(dst, h []float32, mask []int64, mode string) {
	dim := len(dst)
	switch mode {
	case config.PoolingCLS:
		copy(dst, h[:dim])
	case config.PoolingMax:
		first := true
		for j, m := range mask {
			if m == 0 {
				continue
			}
			row := h[j*dim : (j+1)*dim]
			if first {
				copy(dst, row)
				first = false
				continue
			}
			for k, v := range row {
				dst[k] = max(dst[k], v)
			}
		}
	default:
		sum := make([]float64, dim)
		count := 0
		for j, m := range mask {
			if m == 0 {
				continue
			}
			count++
			for k, v := range h[j*dim : (j+1)*dim] {
				sum[k] += float64(v)
			}
		}
		// sentence-transformers divides by the mask's sum clamped to 1e-9.
		n := max(float64(count), 1e-9)
		for k := range dst {
			dst[k] = float32(sum[k] / n)
		}
	}
}

// normalize scales v to unit L2 length (as torch's normalize, the norm
// clamped to 1e-12).
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := max(math.Sqrt(s), 1e-12)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}
