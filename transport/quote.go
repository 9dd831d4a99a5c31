package transport

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
