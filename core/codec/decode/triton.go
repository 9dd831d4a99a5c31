package decode

import (
	"math"
	"strconv"
)

// TritonClasses writes classification results as the Open Inference
// Protocol's classification extension returns them, as Triton does: for
// each item, for each of its classes, "<score>:<index>:<label>", the
// label and its colon left out when the label is empty. The result is
// row-major, of shape [len(items), k] when every item has k classes (as
// Decode gives). The score is written as C++'s std::to_string(float),
// which Triton uses: printf's %f, six decimals ("0.930000"), and "nan",
// "inf" or "-inf".
func TritonClasses(items [][]Class) []string {
	n := 0
	for _, item := range items {
		n += len(item)
	}
	out := make([]string, 0, n)
	var b []byte
	for _, item := range items {
		for _, c := range item {
			b = appendTritonScore(b[:0], c.Score)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(c.Index), 10)
			if c.Label != "" {
				b = append(b, ':')
				b = append(b, c.Label...)
			}
			out = append(out, string(b))
		}
	}
	return out
}

// appendTritonScore writes f as C's printf("%f", f) does.
func appendTritonScore(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'f', 6, 64)
}
