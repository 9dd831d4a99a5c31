package openapi

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// SyntaxError reports a malformed request body found by the shallow decoder.
// Its message never quotes the body.
type SyntaxError struct {
	// Offset is the byte offset in the body where the problem was found.
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

// Placeholders the shallow decoder returns instead of the values it skips.
// They have the JSON kind of the value they stand for and nothing else: the
// structural schema checks kinds only.
var (
	placeholderNumber = float64(0)
	placeholderString = ""
)

// decodeShallow reads one JSON value from r and returns it with the members of
// a top-level object kept as placeholders of their JSON kind: an empty []any
// for an array, an empty map for an object, "" for a string, 0 for a number,
// and the value itself for true, false and null. A top-level value that is
// not an object is returned as such a placeholder too, so that the schema
// reports it.
//
// Nested values are skipped with a bracket-matching scan that checks string
// termination, escapes and bracket balance but not the grammar of the
// elements between them (a stray comma inside an array is left to the typed
// decoder, which parses every element). The top level is parsed fully:
// a duplicate key or trailing data is an error.
func decodeShallow(r io.Reader) (any, error) {
	size := 32 << 10
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < size {
		size = max(l.Len(), 16)
	}
	s := scanner{r: r, buf: make([]byte, size)}
	s.skipSpace()
	c, ok := s.peek()
	if !ok {
		return nil, s.fail("unexpected end of input")
	}
	var v any
	var err error
	if c == '{' {
		v, err = s.object()
	} else {
		v, err = s.value()
	}
	if err != nil {
		return nil, err
	}
	s.skipSpace()
	if _, ok := s.peek(); ok {
		return nil, s.fail("unexpected data after the top-level value")
	}
	if s.err != nil {
		return nil, s.err
	}
	return v, nil
}

// scanner is a forward-only reader over a fixed buffer.
type scanner struct {
	r   io.Reader
	buf []byte
	pos int   // next unread byte in buf
	end int   // bytes of buf holding data
	off int64 // stream offset of buf[0]
	eof bool
	err error // first read error other than io.EOF
}

// fill reads more data when the buffer is used up; it reports whether at
// least one unread byte is available afterwards.
func (s *scanner) fill() bool {
	for s.pos >= s.end {
		if s.eof || s.err != nil {
			return false
		}
		s.off += int64(s.end)
		s.pos, s.end = 0, 0
		n, err := s.r.Read(s.buf)
		s.end = n
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.eof = true
			} else {
				s.err = fmt.Errorf("reading request body: %w", err)
			}
		}
	}
	return true
}

func (s *scanner) peek() (byte, bool) {
	if s.pos >= s.end && !s.fill() {
		return 0, false
	}
	return s.buf[s.pos], true
}

func (s *scanner) offset() int64 { return s.off + int64(s.pos) }

func (s *scanner) fail(msg string) error {
	if s.err != nil {
		return s.err
	}
	return &SyntaxError{Offset: s.offset(), Msg: msg}
}

func (s *scanner) skipSpace() {
	for {
		if s.pos >= s.end && !s.fill() {
			return
		}
		for s.pos < s.end {
			switch s.buf[s.pos] {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return
			}
		}
	}
}

// expect consumes the literal lit (the first byte already peeked).
func (s *scanner) expect(lit string) error {
	for i := 0; i < len(lit); i++ {
		c, ok := s.peek()
		if !ok {
			return s.fail("unexpected end of input")
		}
		if c != lit[i] {
			return s.fail("invalid character in literal")
		}
		s.pos++
	}
	return nil
}

// object parses the top-level object, its members as placeholders.
func (s *scanner) object() (map[string]any, error) {
	s.pos++ // '{'
	out := make(map[string]any)
	s.skipSpace()
	if c, ok := s.peek(); ok && c == '}' {
		s.pos++
		return out, nil
	}
	for {
		s.skipSpace()
		c, ok := s.peek()
		if !ok {
			return nil, s.fail("unexpected end of input")
		}
		if c != '"' {
			return nil, s.fail("expected a string key")
		}
		keyAt := s.offset()
		key, err := s.key()
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, &SyntaxError{Offset: keyAt, Msg: fmt.Sprintf("duplicate key '%s'", clip(key))}
		}
		s.skipSpace()
		if c, ok := s.peek(); !ok {
			return nil, s.fail("unexpected end of input")
		} else if c != ':' {
			return nil, s.fail("expected ':' after a key")
		}
		s.pos++
		s.skipSpace()
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		out[key] = v
		s.skipSpace()
		c, ok = s.peek()
		if !ok {
			return nil, s.fail("unexpected end of input")
		}
		s.pos++
		switch c {
		case ',':
		case '}':
			return out, nil
		default:
			s.pos--
			return nil, s.fail("expected ',' or '}' after an object member")
		}
	}
}

// key reads a string and decodes it.
func (s *scanner) key() (string, error) {
	var raw []byte
	escaped := false
	raw = append(raw, '"')
	s.pos++
	for {
		c, ok := s.peek()
		if !ok {
			return "", s.fail("unexpected end of input in a string")
		}
		s.pos++
		raw = append(raw, c)
		switch {
		case c == '\\':
			escaped = true
			n, ok := s.peek()
			if !ok {
				return "", s.fail("unexpected end of input in a string")
			}
			s.pos++
			raw = append(raw, n)
		case c == '"':
			if !escaped && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			// Escapes, or invalid UTF-8 (replaced by U+FFFD, as encoding/json does).
			var out string
			if err := json.Unmarshal(raw, &out); err != nil {
				return "", s.fail("invalid escape in a key")
			}
			return out, nil
		case c < 0x20:
			return "", s.fail("control character in a string")
		}
	}
}

// value reads any value, returning a placeholder of its kind.
func (s *scanner) value() (any, error) {
	c, ok := s.peek()
	if !ok {
		return nil, s.fail("unexpected end of input")
	}
	switch {
	case c == '[':
		return []any{}, s.skipNested()
	case c == '{':
		return map[string]any{}, s.skipNested()
	case c == '"':
		return placeholderString, s.skipString()
	case c == '-' || ('0' <= c && c <= '9'):
		return placeholderNumber, s.number()
	case c == 't':
		return true, s.expect("true")
	case c == 'f':
		return false, s.expect("false")
	case c == 'n':
		return nil, s.expect("null")
	}
	return nil, s.fail("invalid character at the start of a value")
}

// skipString skips a string, checking escapes and control characters.
func (s *scanner) skipString() error {
	s.pos++ // opening quote
	for {
		if s.pos >= s.end && !s.fill() {
			return s.fail("unexpected end of input in a string")
		}
		c := s.buf[s.pos]
		s.pos++
		switch {
		case c == '"':
			return nil
		case c == '\\':
			if err := s.escape(); err != nil {
				return err
			}
		case c < 0x20:
			s.pos--
			return s.fail("control character in a string")
		}
	}
}

// escape checks the escape sequence after a backslash.
func (s *scanner) escape() error {
	c, ok := s.peek()
	if !ok {
		return s.fail("unexpected end of input in a string")
	}
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		s.pos++
		for i := 0; i < 4; i++ {
			h, ok := s.peek()
			if !ok {
				return s.fail("unexpected end of input in a string")
			}
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return s.fail("invalid escape in a string")
			}
			s.pos++
		}
		return nil
	}
	return s.fail("invalid escape in a string")
}

// number checks the JSON number grammar.
func (s *scanner) number() error {
	digits := func() int {
		n := 0
		for {
			c, ok := s.peek()
			if !ok || c < '0' || c > '9' {
				return n
			}
			s.pos++
			n++
		}
	}
	if c, _ := s.peek(); c == '-' {
		s.pos++
	}
	c, ok := s.peek()
	switch {
	case !ok:
		return s.fail("unexpected end of input in a number")
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		digits()
	default:
		return s.fail("invalid number")
	}
	if c, ok := s.peek(); ok && c == '.' {
		s.pos++
		if digits() == 0 {
			return s.fail("invalid number")
		}
	}
	if c, ok := s.peek(); ok && (c == 'e' || c == 'E') {
		s.pos++
		if c, ok := s.peek(); ok && (c == '+' || c == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.fail("invalid number")
		}
	}
	return nil
}

// Byte classes for skipNested.
const (
	clsOther = iota
	clsQuote
	clsOpen
	clsClose
)

var nestedClass = func() (t [256]uint8) {
	t['"'] = clsQuote
	t['['] = clsOpen
	t['{'] = clsOpen
	t[']'] = clsClose
	t['}'] = clsClose
	return t
}()

// skipNested skips an array or object starting at the current byte, tracking
// bracket balance and strings. This is the hot loop for large tensors.
func (s *scanner) skipNested() error {
	stack := make([]byte, 0, 16)
	for {
		if s.pos >= s.end && !s.fill() {
			return s.fail("unexpected end of input in an array or object")
		}
		buf := s.buf[s.pos:s.end]
		i := 0
		for i < len(buf) {
			// Numbers, commas and spaces make up nearly all of a tensor:
			// skip eight bytes at a time while none of them is a bracket,
			// a brace or a quote.
			for i+8 <= len(buf) && !hasStructural(binary.LittleEndian.Uint64(buf[i:])) {
				i += 8
			}
			if i >= len(buf) {
				break
			}
			c := buf[i]
			switch nestedClass[c] {
			case clsOther:
				i++
				continue
			case clsOpen:
				stack = append(stack, c)
			case clsClose:
				open := byte('[')
				if c == '}' {
					open = '{'
				}
				if len(stack) == 0 || stack[len(stack)-1] != open {
					s.pos += i
					return s.fail("mismatched bracket")
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					s.pos += i + 1
					return nil
				}
			case clsQuote:
				s.pos += i
				if err := s.skipString(); err != nil {
					return err
				}
				i = 0
				if s.pos >= s.end {
					buf = nil
				} else {
					buf = s.buf[s.pos:s.end]
				}
				continue
			}
			i++
		}
		s.pos += i
	}
}

// SWAR constants: one byte repeated over a word.
const (
	lo8      = 0x0101010101010101
	hi8      = 0x8080808080808080
	brace8   = 0x7b7b7b7b7b7b7b7b // '{'; '[' | 0x20 is '{' too
	close8   = 0x7d7d7d7d7d7d7d7d // '}'; ']' | 0x20 is '}' too
	quote8   = 0x2222222222222222 // '"'
	caseBit8 = 0x2020202020202020
)

// hasStructural reports whether any byte of w is '[', ']', '{', '}' or '"'.
func hasStructural(w uint64) bool {
	folded := w | caseBit8
	return hasZeroByte(folded^brace8) || hasZeroByte(folded^close8) || hasZeroByte(w^quote8)
}

// hasZeroByte reports whether any byte of v is zero (exact for "any").
func hasZeroByte(v uint64) bool {
	return (v-lo8)&^v&hi8 != 0
}

// clip shortens a client-supplied name for an error message.
func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "..."
}
