package tensorjson

import "bytes"

// ValuesOver reports whether the JSON body holds more than limit scalar
// values (numbers, strings, booleans and nulls, object keys excepted),
// without decoding anything. When it does, input is the top-level key
// whose value crosses the limit, as written in the body. Bodies with at
// most limit-1 commas are passed at once: each value but the first follows
// a comma. The body need not be valid JSON; the decoder judges that later.
func ValuesOver(body []byte, limit int64) (input string, over bool) {
	_, input, over = CountValues(body, limit)
	return input, over
}

// CountValues is ValuesOver that also returns the body's commas: one fewer
// than its values, at most, when the body holds one array of numbers or
// booleans (a Decoder.SizeHint for it).
func CountValues(body []byte, limit int64) (commas int64, input string, over bool) {
	commas = int64(bytes.Count(body, []byte{','}))
	if commas < limit {
		return commas, "", false
	}
	var n int64
	var key []byte
	depth := 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			k := j + 1
			for k < len(body) && isSpace(body[k]) {
				k++
			}
			if k < len(body) && body[k] == ':' {
				if depth == 1 {
					key = body[i+1 : min(j, len(body))]
				}
			} else {
				n++
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'):
			n++
			for i+1 < len(body) && !isDelim(body[i+1]) {
				i++
			}
		}
		if n > limit {
			return commas, string(key), true
		}
	}
	return commas, "", false
}

func isDelim(c byte) bool {
	return c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' || c == ':' || isSpace(c)
}
