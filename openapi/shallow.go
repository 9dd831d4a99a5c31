package openapi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// SyntaxError reports a malformed request body found by the shallow scan.
// Its message never quotes the body.
type SyntaxError struct {
	// Offset is the byte offset in the body where the problem was found.
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

// jsonKind is the kind of a JSON value as the shallow scan reports it.
type jsonKind uint8

const (
	kindNone jsonKind = iota // no value (an input absent from the body)
	kindObject
	kindArray
	kindString
	kindNumber
	kindTrue
	kindFalse
	kindNull
)

// placeholders are the JSON texts of the stand-in values, by kind: each has
// the kind of the value it stands for and nothing else, since the
// structural schema checks kinds only.
var placeholders = [...]string{
	kindObject: `{}`,
	kindArray:  `[]`,
	kindString: `""`,
	kindNumber: `0`,
	kindTrue:   `true`,
	kindFalse:  `false`,
	kindNull:   `null`,
}

// placeholder returns the generic value of a placeholder of kind k.
func placeholder(k jsonKind) any {
	switch k {
	case kindObject:
		return map[string]any{}
	case kindArray:
		return []any{}
	case kindString:
		return ""
	case kindNumber:
		return float64(0)
	case kindTrue:
		return true
	case kindFalse:
		return false
	}
	return nil
}

// memberFunc receives each member of a top-level object, in body order: its
// decoded key and the kind of its value. key is only valid during the call
// (it may point into the scanned body).
type memberFunc func(key []byte, kind jsonKind)

// scanShallow scans a JSON text in place, without copying it, and returns
// the kind of its top-level value; for a top-level object it calls member
// (if not nil) for each member.
//
// The top level is parsed fully: a duplicate key or trailing data is an
// error. Nested values are skipped with a bracket-matching scan that checks
// string termination, escapes, control characters and bracket balance but
// not the grammar of the elements between them (a stray comma inside an
// array is left to the typed decoder, which parses every element). Every
// part of the scan is linear in the size of data.
func scanShallow(data []byte, member memberFunc) (jsonKind, error) {
	s := scanner{data: data}
	s.skipSpace()
	if s.pos >= len(s.data) {
		return kindNone, s.fail("unexpected end of input")
	}
	var k jsonKind
	var err error
	if s.data[s.pos] == '{' {
		k, err = kindObject, s.object(member)
	} else {
		k, err = s.value()
	}
	if err != nil {
		return kindNone, err
	}
	s.skipSpace()
	if s.pos < len(s.data) {
		return kindNone, s.fail("unexpected data after the top-level value")
	}
	return k, nil
}

// decodeShallow reads one JSON value from r and returns it with the members
// of a top-level object kept as placeholders of their JSON kind: an empty
// []any for an array, an empty map for an object, "" for a string, 0 for a
// number, and the value itself for true, false and null. A top-level value
// that is not an object is returned as such a placeholder too, so that the
// schema reports it.
//
// It is the body decoder registered with openapi3filter: what it reads is
// the Validator's stand-in of a body, a few bytes long.
func decodeShallow(r io.Reader) (any, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	obj := map[string]any{}
	k, err := scanShallow(data, func(key []byte, k jsonKind) {
		obj[string(key)] = placeholder(k)
	})
	if err != nil {
		return nil, err
	}
	if k == kindObject {
		return obj, nil
	}
	return placeholder(k), nil
}

// scanner is a forward-only cursor over a body held in memory.
type scanner struct {
	data []byte
	pos  int // next unread byte
	// quote is the index of a quote at or after the last position asked
	// for by nextQuote (len(data) if there is none): each search starts
	// past the last one found, so all of them read the body once.
	quote  int
	quoted bool // quote is set
}

// nextQuote returns the index of the first quote at or after i, or
// len(s.data).
func (s *scanner) nextQuote(i int) int {
	if !s.quoted || s.quote < i {
		s.quoted = true
		s.quote = len(s.data)
		if j := bytes.IndexByte(s.data[i:], '"'); j >= 0 {
			s.quote = i + j
		}
	}
	return s.quote
}

func (s *scanner) fail(msg string) error {
	return &SyntaxError{Offset: int64(s.pos), Msg: msg}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// expect consumes the literal lit (the first byte already seen).
func (s *scanner) expect(lit string) error {
	for i := 0; i < len(lit); i++ {
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of input")
		}
		if s.data[s.pos] != lit[i] {
			return s.fail("invalid character in literal")
		}
		s.pos++
	}
	return nil
}

// keySet holds the keys of the top-level object seen so far, to find a
// duplicate in time linear in the keys' total size: up to smallKeys keys it
// compares with each, beyond it hashes them into an open-addressing table
// (seeded at random, so that no body can make keys collide on purpose).
// Keys are held as spans of the body, or of extra for keys that had to be
// decoded; the set lives no longer than the scan.
type keySet struct {
	data  []byte
	extra []byte
	spans []keySpan
	seed  maphash.Seed
	// slots hold the upper half of a key's hash and 1 + its index in spans
	// (0 for an empty slot).
	slots []uint64
}

// keySpan is a key's bytes: data[off:off+n], or extra[-off-1:][:n] when off
// is negative.
type keySpan struct{ off, n int }

// smallKeys is how many keys keySet compares with each other.
const smallKeys = 8

func (ks *keySet) bytes(sp keySpan) []byte {
	if sp.off < 0 {
		return ks.extra[-sp.off-1:][:sp.n]
	}
	return ks.data[sp.off:][:sp.n]
}

// add adds key, which is data[off:off+len(key)] or, when off is negative, a
// decoded copy, and reports whether it was there already.
func (ks *keySet) add(key []byte, off int) (dup bool) {
	var h uint64
	if ks.slots == nil {
		for _, sp := range ks.spans {
			if bytes.Equal(ks.bytes(sp), key) {
				return true
			}
		}
	} else {
		h = maphash.Bytes(ks.seed, key)
		mask := len(ks.slots) - 1
		for j := int(h) & mask; ks.slots[j] != 0; j = (j + 1) & mask {
			slot := ks.slots[j]
			if slot>>32 == h>>32 && bytes.Equal(ks.bytes(ks.spans[uint32(slot)-1]), key) {
				return true
			}
		}
	}
	if off < 0 {
		off = -len(ks.extra) - 1
		ks.extra = append(ks.extra, key...)
	}
	if len(ks.spans) == cap(ks.spans) {
		ks.spans = slices.Grow(ks.spans, len(ks.spans)) // double: append grows large slices by a quarter
	}
	ks.spans = append(ks.spans, keySpan{off, len(key)})
	switch {
	case ks.slots == nil && len(ks.spans) > smallKeys:
		ks.seed = maphash.MakeSeed()
		ks.rehash(64)
	case ks.slots == nil:
	case 2*len(ks.spans) > len(ks.slots):
		ks.rehash(2 * len(ks.slots))
	default:
		ks.insert(h, len(ks.spans)-1)
	}
	return false
}

// rehash makes a table of n slots (a power of two) for the keys held.
func (ks *keySet) rehash(n int) {
	ks.slots = make([]uint64, n)
	for i, sp := range ks.spans {
		ks.insert(maphash.Bytes(ks.seed, ks.bytes(sp)), i)
	}
}

// insert puts spans[i], of hash h and known not to be in the table, into a
// free slot.
func (ks *keySet) insert(h uint64, i int) {
	mask := len(ks.slots) - 1
	j := int(h) & mask
	for ks.slots[j] != 0 {
		j = (j + 1) & mask
	}
	ks.slots[j] = h&^(1<<32-1) | uint64(uint32(i+1))
}

// object parses the top-level object and reports its members.
func (s *scanner) object(member memberFunc) error {
	s.pos++ // '{'
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	var few [smallKeys]keySpan
	seen := keySet{data: s.data, spans: few[:0]}
	for {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of input")
		}
		if s.data[s.pos] != '"' {
			return s.fail("expected a string key")
		}
		keyAt := s.pos
		key, decoded, err := s.key()
		if err != nil {
			return err
		}
		off := keyAt + 1 // the body's own bytes
		if decoded {
			off = -1
		}
		dup := seen.add(key, off)
		if dup {
			return &SyntaxError{Offset: int64(keyAt), Msg: fmt.Sprintf("duplicate key '%s'", clip(string(key)))}
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of input")
		} else if s.data[s.pos] != ':' {
			return s.fail("expected ':' after a key")
		}
		s.pos++
		s.skipSpace()
		k, err := s.value()
		if err != nil {
			return err
		}
		if member != nil {
			member(key, k)
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("expected ',' or '}' after an object member")
		}
	}
}

// key reads a string at the current byte and returns it decoded: the bytes
// of the body themselves when it has no escapes and is valid UTF-8, else a
// decoded copy (invalid UTF-8 replaced by U+FFFD, as encoding/json does),
// and then decoded is true.
// A backslash takes the next byte, whatever it is; the escapes are checked
// when the key is decoded.
func (s *scanner) key() (key []byte, decoded bool, err error) {
	start := s.pos
	s.pos++
	escaped := false
	for {
		i := skipStringPlain(s.data, s.pos)
		if i >= len(s.data) {
			s.pos = i
			return nil, false, s.fail("unexpected end of input in a string")
		}
		c := s.data[i]
		s.pos = i + 1
		switch {
		case c == '\\':
			escaped = true
			if s.pos >= len(s.data) {
				return nil, false, s.fail("unexpected end of input in a string")
			}
			s.pos++
		case c == '"':
			raw := s.data[start:s.pos]
			if !escaped && utf8.Valid(raw) {
				return raw[1 : len(raw)-1], false, nil
			}
			var out string
			if err := json.Unmarshal(raw, &out); err != nil {
				return nil, false, s.fail("invalid escape in a key")
			}
			return []byte(out), true, nil
		default: // c < 0x20
			return nil, false, s.fail("control character in a string")
		}
	}
}

// value skips any value, returning its kind.
func (s *scanner) value() (jsonKind, error) {
	if s.pos >= len(s.data) {
		return kindNone, s.fail("unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '[':
		return kindArray, s.skipNested()
	case c == '{':
		return kindObject, s.skipNested()
	case c == '"':
		return kindString, s.skipString()
	case c == '-' || ('0' <= c && c <= '9'):
		return kindNumber, s.number()
	case c == 't':
		return kindTrue, s.expect("true")
	case c == 'f':
		return kindFalse, s.expect("false")
	case c == 'n':
		return kindNull, s.expect("null")
	}
	return kindNone, s.fail("invalid character at the start of a value")
}

// skipString skips a string, checking escapes and control characters.
func (s *scanner) skipString() error {
	data := s.data
	i := s.pos + 1 // after the opening quote
	for {
		if i < len(data) && stringClass[data[i]] == 0 {
			i = skipStringPlain(data, i+1)
		}
		if i >= len(data) {
			s.pos = i
			return s.fail("unexpected end of input in a string")
		}
		switch data[i] {
		case '"':
			s.pos = i + 1
			return nil
		case '\\':
			if i+1 < len(data) && simpleEscape[data[i+1]] {
				i += 2
				continue
			}
			s.pos = i + 1
			if err := s.escape(); err != nil {
				return err
			}
			i = s.pos
		default: // < 0x20
			s.pos = i
			return s.fail("control character in a string")
		}
	}
}

// stringClass marks the bytes that end a run of plain string bytes: the
// quote, the backslash and the control characters.
var stringClass = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = 1
	}
	t['"'], t['\\'] = 1, 1
	return t
}()

// simpleEscape marks the bytes that complete a two-byte escape.
var simpleEscape = func() (t [256]bool) {
	for _, c := range `"\/bfnrt` {
		t[c] = true
	}
	return t
}()

// escape checks the escape sequence after a backslash.
func (s *scanner) escape() error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of input in a string")
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		s.pos++
		for i := 0; i < 4; i++ {
			if s.pos >= len(s.data) {
				return s.fail("unexpected end of input in a string")
			}
			h := s.data[s.pos]
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
		for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos >= len(s.data):
		return s.fail("unexpected end of input in a number")
	case s.data[s.pos] == '0':
		s.pos++
	case '1' <= s.data[s.pos] && s.data[s.pos] <= '9':
		digits()
	default:
		return s.fail("invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.fail("invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
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
// bracket balance and strings. This is the hot loop for large tensors: runs
// of bytes that are none of [ ] { } " (numbers, commas, spaces) are skipped
// by skipNestedPlain, the rest is taken a byte at a time.
func (s *scanner) skipNested() error {
	data := s.data
	// open holds one bit per open bracket, 1 for '{', 0 for '['; depth counts
	// them. 256 levels fit without allocating.
	var small [4]uint64
	open := small[:]
	depth := 0
	i := s.pos
	// Up to the next quote, only brackets and braces matter.
	quote := s.nextQuote(i)
	for {
		if i >= len(data) {
			s.pos = i
			return s.fail("unexpected end of input in an array or object")
		}
		c := data[i]
		switch nestedClass[c] {
		case clsOther:
			i = skipBrackets(data[:quote], i+1)
		case clsOpen:
			w := depth >> 6
			if w == len(open) {
				open = append(open, 0)
			}
			bit := uint64(1) << (depth & 63)
			if c == '{' {
				open[w] |= bit
			} else {
				open[w] &^= bit
			}
			depth++
			i++
		case clsClose:
			d := depth - 1 // depth >= 1: the scan starts at a bracket
			isBrace := open[d>>6]>>(d&63)&1 == 1
			if isBrace != (c == '}') {
				s.pos = i
				return s.fail("mismatched bracket")
			}
			depth = d
			i++
			if depth == 0 {
				s.pos = i
				return nil
			}
		case clsQuote:
			s.pos = i
			if err := s.skipString(); err != nil {
				return err
			}
			i = s.pos
			quote = s.nextQuote(i)
		}
	}
}

// skipBrackets returns the index of the first byte at or after i that may
// be a bracket or a brace (or len(data)): numbers, commas and spaces, nearly
// all of a tensor, are skipped 32 and 8 bytes at a time. The byte found may
// also be one of a few letters that the word test does not tell apart (see
// bracketMask); the caller checks it. The caller ends data at the next
// quote.
func skipBrackets(data []byte, i int) int {
	for ; i+32 <= len(data); i += 32 {
		w := data[i : i+32]
		m := bracketMask(binary.LittleEndian.Uint64(w)) |
			bracketMask(binary.LittleEndian.Uint64(w[8:])) |
			bracketMask(binary.LittleEndian.Uint64(w[16:])) |
			bracketMask(binary.LittleEndian.Uint64(w[24:]))
		if m != 0 {
			break
		}
	}
	for ; i+8 <= len(data); i += 8 {
		if m := bracketMask(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(data) && nestedClass[data[i]] == clsOther; i++ {
	}
	return i
}

// skipStringPlain returns the index of the first quote, backslash or
// control character at or after i (or len(data)), eight bytes at a time.
func skipStringPlain(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		if m := zeroMask(w^quote8) | zeroMask(w^backslash8) | lessMask(w, 0x20); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(data); i++ {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// SWAR constants: one byte repeated over a word.
const (
	lo8        = 0x0101010101010101
	hi8        = 0x8080808080808080
	quote8     = 0x2222222222222222 // '"'
	backslash8 = 0x5c5c5c5c5c5c5c5c // '\\'
	bracket8   = 0x2626262626262626 // the bits in which [ ] { } differ
	ones7f8    = 0x7f7f7f7f7f7f7f7f
)

// The masks below have the high bit set in flagged bytes. Above the lowest
// flagged byte a borrow may flag more, so only the lowest is exact, and
// only it is used (bits.TrailingZeros64).

// zeroMask flags the zero bytes of v.
func zeroMask(v uint64) uint64 {
	return (v - lo8) &^ v & hi8
}

// lessMask flags the bytes of v below n (n <= 0x80).
func lessMask(v uint64, n byte) uint64 {
	return (v - lo8*uint64(n)) &^ v & hi8
}

// bracketMask flags the bytes of w that are '[', ']', '{' or '}' — and, as
// those differ only in the bits 0x26, also 'Y', '_', 'y' and DEL, which
// the caller tells apart by a table.
func bracketMask(w uint64) uint64 {
	return zeroMask((w | bracket8) ^ ones7f8)
}

// clip shortens a client-supplied name for an error message: at most 64
// runes, then "...". It walks the first runes only, whatever the length.
func clip(s string) string {
	const max = 64
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "..."
		}
		n++
	}
	return s
}
