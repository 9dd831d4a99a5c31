package tensorjson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// strErr describes a malformed string literal.
type strErr struct {
	off    int
	reason string
	// unicode is set when the literal is well-formed JSON but not valid
	// Unicode (invalid UTF-8, a lone surrogate escape): a bad value rather
	// than malformed JSON.
	unicode bool
}

// scanString reads the JSON string whose opening quote is at b[i]. When the
// literal holds no escapes, control characters or non-ASCII bytes it returns
// raw = the bytes between the quotes (no copy). Otherwise it appends the
// unescaped text to dst and returns it with raw == nil. Invalid UTF-8 and
// lone surrogate escapes are errors (e.unicode set): nothing is silently
// replaced. end is the offset just past the closing
// quote. On error ok is false and e says why.
func scanString(b []byte, i int, dst []byte) (raw, out []byte, end int, e strErr, ok bool) {
	j := i + 1
	for j < len(b) {
		c := b[j]
		if c == '"' {
			return b[i+1 : j], dst, j + 1, e, true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		j++
	}
	out = append(dst, b[i+1:j]...)
	for {
		if j >= len(b) {
			return nil, out, j, strErr{off: j, reason: "unexpected end of input"}, false
		}
		c := b[j]
		switch {
		case c == '"':
			return nil, out, j + 1, e, true
		case c < 0x20:
			return nil, out, j, strErr{off: j, reason: "invalid character " + quoteChar(c) + " in string literal"}, false
		case c < 0x80 && c != '\\':
			// Copy the run of plain ASCII in one go.
			k := j + 1
			for k < len(b) && b[k] >= 0x20 && b[k] < 0x80 && b[k] != '"' && b[k] != '\\' {
				k++
			}
			out = append(out, b[j:k]...)
			j = k
		case c >= 0x80:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return nil, out, j, strErr{off: j, reason: "invalid UTF-8 in string", unicode: true}, false
			}
			out = append(out, b[j:j+size]...)
			j += size
		default: // backslash
			if j+1 >= len(b) {
				return nil, out, j + 1, strErr{off: j + 1, reason: "unexpected end of input"}, false
			}
			switch b[j+1] {
			case '"', '\\', '/':
				out = append(out, b[j+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b, j+2)
				if !ok {
					return nil, out, j, strErr{off: j, reason: "invalid \\u escape in string literal"}, false
				}
				j += 6
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by an escaped low one is one
					// character; anything else is a lone surrogate, which
					// UTF-8 cannot hold.
					if r < 0xdc00 && j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
						if r2, ok := hex4(b, j+2); ok {
							if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
								out = utf8.AppendRune(out, c)
								j += 6
								continue
							}
						}
					}
					return nil, out, j - 6, strErr{off: j - 6, reason: "lone surrogate \\u escape in string", unicode: true}, false
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, out, j, strErr{off: j, reason: "invalid escape sequence in string literal"}, false
			}
			j += 2
		}
	}
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// quoteChar shows one byte of the body in an error message: 'x' for
// printable ASCII, '\xNN' otherwise.
func quoteChar(c byte) string {
	const hexd = "0123456789abcdef"
	switch {
	case c == '\'':
		return `'\''`
	case c == '\\':
		return `'\\'`
	case c >= 0x20 && c < 0x7f:
		return "'" + string(rune(c)) + "'"
	}
	return `'\x` + string(hexd[c>>4]) + string(hexd[c&15]) + "'"
}
