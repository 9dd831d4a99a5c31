package transport

import "strconv"

// maxQuoted is the longest client-supplied text an error message quotes.
const maxQuoted = 64

// Quote shortens client-supplied text for an error message: at most 64
// bytes, cut at a UTF-8 boundary, with "..." when cut.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	i := maxQuoted
	for i > 0 && s[i]&0xc0 == 0x80 { // do not cut a UTF-8 sequence
		i--
	}
	return s[:i] + "..."
}

// FormatShape writes a shape for messages: [1, 3, 224, 224].
func FormatShape(s []int64) string {
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return string(append(b, ']'))
}
