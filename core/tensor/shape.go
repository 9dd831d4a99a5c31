package tensor

import "strconv"

// FormatShape writes a shape for messages and descriptions, in every
// protocol alike: [1, 3, 224, 224], a model's dynamic dimension as -1, as
// /info and the specification write it (and a request's negative
// dimension as the request wrote it).
func FormatShape(s []int64) string {
	return string(AppendShape(nil, s))
}

// AppendShape appends FormatShape(s) to b.
func AppendShape(b []byte, s []int64) []byte {
	b = append(b, '[')
	for i, d := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return append(b, ']')
}
