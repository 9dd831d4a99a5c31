package tensorjson

import "bytes"

// CountValues reports whether the JSON body holds more than limit scalar
// values (numbers, strings, booleans and nulls, object keys excepted),
// without decoding anything, and its commas: one fewer than its values,
// at most, when the body holds one array of numbers or booleans (a
// Decoder.SizeHint for it). When it is over, input is the top-level key
// whose value crosses the limit, as written in the body. Bodies with at
// most limit-1 commas are passed at once: each value but the first
// follows a comma. The body need not be valid JSON; the decoder judges
// that later.
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
// (numbers, booleans, nulls) its value holds (KeyScan.Values): a size
// hint of the decoder's.
type KeyValues struct {
	Key    []byte // as written in the body, escapes and all
	Values int64
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

// Scan is what one pass over a JSON object body says before it is
// decoded, so that a protocol reads its body once: its commas (its values
// are at most one more), and for each top-level key as written, a bound of
// its values, its strings and the first byte of its value. It does not
// parse (ScanObject): the decoder judges the body.
type Scan struct {
	Commas int64
	Keys   []KeyScan
	// Strings counts every string, keys included; Escaped is set when a
	// key holds a backslash (its name is not the bytes written).
	Strings int64
	Escaped bool
}

// KeyScan is one key of a Scan.
type KeyScan struct {
	Key []byte // as written, escapes and all
	// Values bounds the values (numbers, strings, booleans, nulls) under
	// the key: the commas up to the next key (the last key's plus one),
	// as ValueCounts counts them. Strings counts its string values.
	Values, Strings int64
	// First is the first byte of its value (0 when there is none).
	First byte
}

// ScanObject scans body, which should be a JSON object, in one pass: it
// jumps from one quote to the next (eachString), takes a string followed
// by a colon for a key, and counts the commas between one key and the
// next. A comma or a colon inside a string can only raise a count, or
// split one key's count in two; a body that does not start as an object
// has no keys.
func ScanObject(body []byte) Scan {
	var s Scan
	valueStart := -1
	// finish counts the commas of the last key's value, up to end: the
	// comma before the next key counts for the value it ends, and the
	// last value gets one more.
	finish := func(end int, last bool) {
		if valueStart >= 0 {
			k := &s.Keys[len(s.Keys)-1]
			k.Values = int64(bytes.Count(body[valueStart:end], []byte{','}))
			s.Commas += k.Values
			if last {
				k.Values++
			}
		}
	}
	eachString(body, func(start, end int, key bool, next int) bool {
		s.Strings++
		if !key {
			if len(s.Keys) > 0 {
				s.Keys[len(s.Keys)-1].Strings++
			}
			return true
		}
		finish(start, false)
		k := KeyScan{Key: body[start+1 : end]}
		if bytes.IndexByte(k.Key, '\\') >= 0 {
			s.Escaped = true
		}
		i := next
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		if i < len(body) {
			k.First = body[i]
		}
		s.Keys = append(s.Keys, k)
		valueStart = next
		return true
	})
	finish(len(body), true)
	return s
}

// Over reports whether body, scanned as s, holds more than limit values,
// and the key whose value crosses it: s's commas decide at once for
// almost every body, and only a body of limit commas or more is counted
// value by value (CountValues).
func (s Scan) Over(body []byte, limit int64) (input string, over bool) {
	if s.Commas < limit {
		return "", false
	}
	_, input, over = CountValues(body, limit)
	return input, over
}

// Key is the scan of key (as written), or nil.
func (s Scan) Key(key string) *KeyScan {
	for i := range s.Keys {
		if string(s.Keys[i].Key) == key {
			return &s.Keys[i]
		}
	}
	return nil
}
