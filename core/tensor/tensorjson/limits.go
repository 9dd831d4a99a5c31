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
			j := closingQuote(body, i+1)
			if j < 0 {
				j = len(body)
			}
			k := j + 1
			for k < len(body) && isSpace(body[k]) {
				k++
			}
			if k < len(body) && body[k] == ':' {
				if depth == 1 {
					key = body[i+1 : j]
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

// KeyValues is a top-level key of a body and an upper bound of the values
// (numbers, booleans, nulls) its value holds: the commas up to the next
// key, plus one.
type KeyValues struct {
	Key    []byte // as written in the body, escapes and all
	Values int64
}

// ValueCounts finds the keys of a JSON object body and bounds the values
// under each, for Decoder.SizeHint on a request of several inputs. It does
// not parse: it jumps from one quote to the next (bytes.IndexByte), takes a
// string followed by a colon for a key, and counts the commas between one
// key and the next (bytes.Count), so it costs a small part of decoding the
// numbers. A comma inside a string or a nested key can only raise a count,
// and a count only sizes an allocation, so a body that is not what it
// seems costs some memory at worst; the decoder judges the body. It
// returns nil when the body does not start as an object or holds more than
// maxStrings strings (keys included): those bodies are mostly strings,
// which take no hint.
func ValueCounts(body []byte, maxStrings int) []KeyValues {
	i := 0
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	if i == len(body) || body[i] != '{' {
		return nil
	}
	var out []KeyValues
	valueStart := -1 // where the current key's value starts; -1 before the first key
	strings := 0
	for {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			break
		}
		start := i + q // the opening quote
		end := closingQuote(body, start+1)
		if end < 0 {
			break
		}
		if strings++; strings > maxStrings {
			return nil
		}
		k := end + 1
		for k < len(body) && isSpace(body[k]) {
			k++
		}
		i = k
		if k == len(body) || body[k] != ':' {
			continue // a string value
		}
		if valueStart >= 0 {
			out[len(out)-1].Values = int64(bytes.Count(body[valueStart:start], []byte{','}))
		}
		out = append(out, KeyValues{Key: body[start+1 : end]})
		valueStart = k + 1
		i = k + 1
	}
	if valueStart >= 0 {
		out[len(out)-1].Values = int64(bytes.Count(body[valueStart:], []byte{','})) + 1
	}
	return out
}

// closingQuote is the index of the quote that ends the string whose text
// starts at from, or -1.
func closingQuote(body []byte, from int) int {
	for from <= len(body) {
		q := bytes.IndexByte(body[from:], '"')
		if q < 0 {
			return -1
		}
		end := from + q
		backslashes := 0
		for j := end - 1; j >= from && body[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end
		}
		from = end + 1
	}
	return -1
}

// StringCounts finds the keys of a JSON object body and counts the
// strings under each: the string values between one key and the next.
// Like ValueCounts it does not parse, jumping from one quote to the next,
// so it costs a small part of decoding the strings; a request that sends
// pictures or texts as JSON strings is counted by it before anything is
// decoded. A string followed by a colon is a key, wherever it is, so a
// body that is not what it seems can only split a count; the decoder
// judges the body. It returns nil when the body does not start as an
// object.
func StringCounts(body []byte) []KeyValues {
	i := 0
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	if i == len(body) || body[i] != '{' {
		return nil
	}
	var out []KeyValues
	for {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			return out
		}
		start := i + q
		end := closingQuote(body, start+1)
		if end < 0 {
			return out
		}
		k := end + 1
		for k < len(body) && isSpace(body[k]) {
			k++
		}
		i = k
		switch {
		case k < len(body) && body[k] == ':':
			out = append(out, KeyValues{Key: body[start+1 : end]})
			i = k + 1
		case len(out) > 0:
			out[len(out)-1].Values++
		}
	}
}
