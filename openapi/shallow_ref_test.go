package openapi

// The shallow decoder as it was before it scanned the body in place: a
// reader through a 32 KiB buffer. The differential tests hold the in-place
// scan to the same answers (kinds, errors, offsets) on every input.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

var (
	refPlaceholderNumber = float64(0)
	refPlaceholderString = ""
)

// decodeShallowRef reads one JSON value from r and returns it with the members of
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
func decodeShallowRef(r io.Reader) (any, error) {
	size := 32 << 10
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < size {
		size = max(l.Len(), 16)
	}
	s := refScanner{r: r, buf: make([]byte, size)}
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

// refScanner is a forward-only reader over a fixed buffer.
type refScanner struct {
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
func (s *refScanner) fill() bool {
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

func (s *refScanner) peek() (byte, bool) {
	if s.pos >= s.end && !s.fill() {
		return 0, false
	}
	return s.buf[s.pos], true
}

func (s *refScanner) offset() int64 { return s.off + int64(s.pos) }

func (s *refScanner) fail(msg string) error {
	if s.err != nil {
		return s.err
	}
	return &SyntaxError{Offset: s.offset(), Msg: msg}
}

func (s *refScanner) skipSpace() {
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
func (s *refScanner) expect(lit string) error {
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
func (s *refScanner) object() (map[string]any, error) {
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
func (s *refScanner) key() (string, error) {
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
func (s *refScanner) value() (any, error) {
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
		return refPlaceholderString, s.skipString()
	case c == '-' || ('0' <= c && c <= '9'):
		return refPlaceholderNumber, s.number()
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
func (s *refScanner) skipString() error {
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
func (s *refScanner) escape() error {
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
func (s *refScanner) number() error {
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
	refOther = iota
	refQuote
	refOpen
	refClose
)

var refNestedClass = func() (t [256]uint8) {
	t['"'] = refQuote
	t['['] = refOpen
	t['{'] = refOpen
	t[']'] = refClose
	t['}'] = refClose
	return t
}()

// skipNested skips an array or object starting at the current byte, tracking
// bracket balance and strings. This is the hot loop for large tensors.
func (s *refScanner) skipNested() error {
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
			for i+8 <= len(buf) && !refHasStructural(binary.LittleEndian.Uint64(buf[i:])) {
				i += 8
			}
			if i >= len(buf) {
				break
			}
			c := buf[i]
			switch refNestedClass[c] {
			case refOther:
				i++
				continue
			case refOpen:
				stack = append(stack, c)
			case refClose:
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
			case refQuote:
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
	refLo8      = 0x0101010101010101
	refHi8      = 0x8080808080808080
	refBrace8   = 0x7b7b7b7b7b7b7b7b // '{'; '[' | 0x20 is '{' too
	refClose8   = 0x7d7d7d7d7d7d7d7d // '}'; ']' | 0x20 is '}' too
	refQuote8   = 0x2222222222222222 // '"'
	refCaseBit8 = 0x2020202020202020
)

// refHasStructural reports whether any byte of w is '[', ']', '{', '}' or '"'.
func refHasStructural(w uint64) bool {
	folded := w | refCaseBit8
	return refHasZeroByte(folded^refBrace8) || refHasZeroByte(folded^refClose8) || refHasZeroByte(w^refQuote8)
}

// refHasZeroByte reports whether any byte of v is zero (exact for "any").
func refHasZeroByte(v uint64) bool {
	return (v-refLo8)&^v&refHi8 != 0
}

// refMediaType is the media type under which refValidate registers the
// former decoder.
const refMediaType = "application/vnd.svc.predict-structure-ref+json"

var registerRef sync.Once

// refValidate is ValidateBody as it was: the whole body through
// openapi3filter and the former decoder, and the former translation of its
// errors (which ranged over every unknown key).
func refValidate(v *Validator, body []byte) error {
	registerRef.Do(func() {
		openapi3filter.RegisterBodyDecoder(refMediaType,
			func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
				return decodeShallowRef(r)
			})
	})
	schema := v.route.Operation.RequestBody.Value.Content.Get(StructureMediaType).Schema
	op := *v.route.Operation
	op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
		WithRequired(true).
		WithContent(openapi3.Content{refMediaType: openapi3.NewMediaType().WithSchemaRef(schema)})}
	route := *v.route
	route.Operation = &op
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           v.url,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {refMediaType}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}
	err := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req,
		Route:   &route,
		Options: v.options,
	})
	if err == nil {
		return nil
	}
	return refTranslate(v, err)
}

func refTranslate(v *Validator, err error) error {
	var syn *SyntaxError
	if errors.As(err, &syn) {
		return &ValidationError{Message: "Invalid JSON body: " + syn.Error()}
	}
	if errors.Is(err, openapi3filter.ErrInvalidRequired) {
		return &ValidationError{Message: msgEmpty}
	}
	var schemaErrs []*openapi3.SchemaError
	collectSchemaErrors(err, &schemaErrs)
	if len(schemaErrs) == 0 {
		return &ValidationError{Message: msgInvalid}
	}
	var missing, wrongKind []string
	var unknown []string
	for _, se := range schemaErrs {
		path := se.JSONPointer()
		switch {
		case se.SchemaField == "required" && len(path) == 1:
			missing = append(missing, path[0])
		case se.SchemaField == "properties" && len(path) == 0:
			if obj, ok := se.Value.(map[string]any); ok {
				for k := range obj {
					if _, known := v.kinds[k]; !known {
						unknown = append(unknown, k)
					}
				}
			}
		case len(path) == 0:
			return &ValidationError{Message: msgNotObject}
		default:
			wrongKind = append(wrongKind, path[0])
		}
	}
	if name, ok := v.firstInOrder(missing); ok {
		return &ValidationError{Input: name, Message: fmt.Sprintf("Missing required input: '%s'", name)}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &ValidationError{Input: unknown[0], Message: fmt.Sprintf(
			"Unknown input '%s'; the model's inputs are: %s", clip(unknown[0]), v.inputList())}
	}
	if name, ok := v.firstInOrder(wrongKind); ok {
		return &ValidationError{Input: name, Message: fmt.Sprintf(
			"Invalid input type for '%s': expected %s", name, expectedKind(v.kinds[name]))}
	}
	return &ValidationError{Message: msgInvalid}
}
