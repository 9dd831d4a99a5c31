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
	var out []KeyValues
	valueStart := -1 // where the current key's value starts; -1 before the first key
	strings := 0
	over := false
	eachString(body, func(start, end int, key bool, next int) bool {
		if strings++; strings > maxStrings {
			over = true
			return false
		}
		if !key {
			return true
		}
		if valueStart >= 0 {
			out[len(out)-1].Values = int64(bytes.Count(body[valueStart:start], []byte{','}))
		}
		out = append(out, KeyValues{Key: body[start+1 : end]})
		valueStart = next
		return true
	})
	if over {
		return nil
	}
	if valueStart >= 0 {
		out[len(out)-1].Values = int64(bytes.Count(body[valueStart:], []byte{','})) + 1
	}
	return out
}

// eachString calls visit for each string of a body that starts as a JSON
// object, in order, jumping from one quote to the next: where its opening
// and closing quotes are, whether a colon follows it (a key), and where
// the text after it (after the colon, for a key) starts. It stops when
// visit returns false, at an unterminated string, or at once when the
// body does not start as an object.
func eachString(body []byte, visit func(start, end int, key bool, next int) bool) {
	i := 0
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	if i == len(body) || body[i] != '{' {
		return
	}
	for {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			return
		}
		start := i + q
		end := closingQuote(body, start+1)
		if end < 0 {
			return
		}
		i = end + 1
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		key := i < len(body) && body[i] == ':'
		if key {
			i++
		}
		if !visit(start, end, key, i) {
			return
		}
	}
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
	var out []KeyValues
	eachString(body, func(start, end int, key bool, _ int) bool {
		switch {
		case key:
			out = append(out, KeyValues{Key: body[start+1 : end]})
		case len(out) > 0:
			out[len(out)-1].Values++
		}
		return true
	})
	return out
}
