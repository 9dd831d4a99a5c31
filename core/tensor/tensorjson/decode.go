package tensorjson

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/svc-dev/svc/core/tensor"
)

// maxNesting is the deepest nesting of objects and arrays accepted in a body
// (the top-level object counts as one level).
const maxNesting = 64

// maxArrayDepth is how deeply arrays may nest inside the top-level object.
const maxArrayDepth = maxNesting - 1

// Error is a client mistake in a JSON body. Message is meant to be shown to
// the client verbatim; Input names the input concerned ("" for errors about
// the body as a whole, such as malformed JSON).
type Error struct {
	Input   string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Decoder parses JSON values into typed tensors without boxing elements in
// interfaces. A protocol's object layer walks its envelope with Key,
// SkipSpace and Peek, and hands each tensor value to Value. A Decoder is not
// safe for concurrent use; get one with NewDecoder and give it back with
// Release.
type Decoder struct{ d *decoder }

// NewDecoder returns a pooled decoder positioned at the start of body. n is
// how many tensors the caller expects to decode from it (they then share
// allocations); 0 is fine.
func NewDecoder(body []byte, n int) Decoder {
	d := decoderPool.Get().(*decoder)
	d.b, d.pos = body, 0
	d.nspecs, d.out, d.shapes = max(n, 1), nil, nil
	d.maxString = 0
	return Decoder{d}
}

// LimitStrings rejects string elements longer than n bytes (after
// unescaping) with an Error naming the input and the element; 0 = no limit.
func (x Decoder) LimitStrings(n int) { x.d.maxString = n }

// Release returns the decoder's buffers to the pool. Tensors already
// returned by Value stay valid: they never refer to the body or to the
// decoder's scratch space.
func (x Decoder) Release() {
	x.d.release()
	decoderPool.Put(x.d)
}

// Pos is the offset of the next byte to read.
func (x Decoder) Pos() int { return x.d.pos }

// SkipSpace moves past JSON whitespace.
func (x Decoder) SkipSpace() { x.d.skipWS() }

// Peek returns the byte at Pos, or false at the end of the body.
func (x Decoder) Peek() (byte, bool) {
	if x.d.pos >= len(x.d.b) {
		return 0, false
	}
	return x.d.b[x.d.pos], true
}

// Advance moves past n bytes the caller has looked at with Peek.
func (x Decoder) Advance(n int) { x.d.pos = min(x.d.pos+n, len(x.d.b)) }

// Unexpected reports malformed JSON at Pos: the byte found there (or the end
// of input), and what the parser was doing ("after object key").
func (x Decoder) Unexpected(context string) *Error { return x.d.unexpected(context) }

// Key parses an object key and the colon after it, at Pos. It returns the
// key as written when it has no escapes, or unescaped; the bytes are valid
// until the next call on the decoder.
func (x Decoder) Key() ([]byte, error) {
	d := x.d
	if d.pos >= len(d.b) || d.b[d.pos] != '"' {
		return nil, d.unexpected("looking for beginning of object key string")
	}
	raw, key, end, se, ok := scanString(d.b, d.pos, d.key[:0])
	d.key = key[:0]
	if !ok {
		return nil, syntaxErr(se.off, se.reason)
	}
	if raw == nil {
		raw = key
	}
	d.pos = end
	d.skipWS()
	if d.pos >= len(d.b) || d.b[d.pos] != ':' {
		return nil, d.unexpected("after object key")
	}
	d.pos++
	return raw, nil
}

// Value parses the value at Pos as the input spec describes and moves past
// it. The nesting of the arrays gives the shape, which must match
// spec.Shape (a nil Shape accepts any rank). A value nested one level less
// than the rank is a single item when the first dimension is dynamic or 1,
// and gets a batch dimension of 1; a bare value is accepted for shape [1],
// [-1] and rank 0. An empty array says nothing about what it would hold, so
// the dimensions below it come from the spec. spec.DType must be valid.
func (x Decoder) Value(spec *tensor.Spec) (*tensor.Tensor, error) {
	if !spec.DType.Valid() {
		return nil, fmt.Errorf("tensorjson: input %q has unsupported dtype %v", spec.Name, spec.DType)
	}
	return x.d.value(spec)
}

// SizeHint says that the next value decoded holds at most about n
// elements (a count of the body's commas gives it for a request of one
// input). Their storage is then allocated once, at that capacity, and the
// tensor takes it over, instead of the elements being collected in the
// decoder's pooled buffer, which grows by copying and is copied out at the
// end. It applies to the next Value only; n ≤ 0 cancels it. String values
// ignore it.
func (x Decoder) SizeHint(n int64) {
	x.d.hint = max(n, 0)
}

// SkipValue checks that a well-formed JSON value starts at Pos and moves
// past it, without decoding it.
func (x Decoder) SkipValue() error {
	if err := x.d.validateValue(); err != nil {
		return err
	}
	return nil
}

var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

// decoder holds the parsing state and the scratch buffers elements are
// collected in; the buffers are reused through decoderPool.
type decoder struct {
	b   []byte
	pos int

	spec *tensor.Spec
	dt   tensor.DType

	f32   []float32
	f64   []float64
	u16   []uint16 // float16, bfloat16 and uint16
	i8    []int8
	i16   []int16
	i32   []int32
	i64   []int64
	u8    []uint8
	u32   []uint32
	u64   []uint64
	bools []bool
	arena []byte // string elements, concatenated
	ends  []int  // end offset of each string element in arena
	key   []byte

	maxString int // longest string element accepted, in bytes; 0 = any

	// hint is the element count SizeHint announced for the next value (0:
	// none); owned says the current scratch slice was allocated for this
	// value alone and goes to its tensor without a copy.
	hint  int64
	owned bool

	// Per request, not reused: room for the tensors and shapes returned.
	nspecs int
	out    []tensor.Tensor
	shapes []int64

	leaf      int                  // depth of the elements; -1 while unknown
	emptyLeaf bool                 // leaf was set by an empty array, not by an element
	dims      [maxArrayDepth]int64 // length of the arrays at each depth; -1 unknown
	idx       [maxArrayDepth]int64 // index path of the element being parsed
}

// maxRetained bounds the size (in bytes) of a scratch buffer kept in the pool.
const maxRetained = 16 << 20

func (d *decoder) release() {
	d.b = nil
	d.spec = nil
	d.out, d.shapes = nil, nil
	d.hint, d.owned = 0, false
	if cap(d.f32)*4 > maxRetained {
		d.f32 = nil
	}
	if cap(d.f64)*8 > maxRetained {
		d.f64 = nil
	}
	if cap(d.u16)*2 > maxRetained {
		d.u16 = nil
	}
	if cap(d.i8) > maxRetained {
		d.i8 = nil
	}
	if cap(d.i16)*2 > maxRetained {
		d.i16 = nil
	}
	if cap(d.i32)*4 > maxRetained {
		d.i32 = nil
	}
	if cap(d.i64)*8 > maxRetained {
		d.i64 = nil
	}
	if cap(d.u8) > maxRetained {
		d.u8 = nil
	}
	if cap(d.u32)*4 > maxRetained {
		d.u32 = nil
	}
	if cap(d.u64)*8 > maxRetained {
		d.u64 = nil
	}
	if cap(d.bools) > maxRetained {
		d.bools = nil
	}
	if cap(d.arena) > maxRetained {
		d.arena = nil
	}
	if cap(d.ends)*8 > maxRetained {
		d.ends = nil
	}
	if cap(d.key) > 1<<16 {
		d.key = nil
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func (d *decoder) skipWS() {
	for d.pos < len(d.b) && isSpace(d.b[d.pos]) {
		d.pos++
	}
}

// syntaxErr reports malformed JSON at offset off.
func syntaxErr(off int, reason string) *Error {
	return &Error{Message: "Invalid JSON body: " + reason + " at offset " + strconv.Itoa(off)}
}

// unexpected reports the byte at d.pos (or the end of input) in context.
func (d *decoder) unexpected(context string) *Error {
	if d.pos >= len(d.b) {
		return syntaxErr(len(d.b), "unexpected end of input")
	}
	return syntaxErr(d.pos, "invalid character "+quoteChar(d.b[d.pos])+" "+context)
}

// elemNoun is what one element of type d is called in messages.
func elemNoun(d tensor.DType) string {
	switch d {
	case tensor.Bool:
		return "a boolean"
	case tensor.String:
		return "a string"
	}
	return "a number"
}

// scalarNoun is the expected bare value of a rank-0 input.
func scalarNoun(d tensor.DType) string {
	switch d {
	case tensor.Bool:
		return "boolean"
	case tensor.String:
		return "string"
	}
	return "number"
}

func formatPath(idx []int64) string {
	b := make([]byte, 0, 2+len(idx)*4)
	b = append(b, '[')
	for i, v := range idx {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(append(b, ']'))
}

func formatShape(s []int64) string { return tensor.FormatShape(s) }

func (d *decoder) inputErr(msg string) *Error {
	return &Error{Input: d.spec.Name, Message: "Invalid input for '" + d.spec.Name + "': " + msg}
}

// valueErr reports a bad element at the path idx[:depth] (no path for a
// bare value at depth 0).
func (d *decoder) valueErr(depth int, msg string) *Error {
	at := ""
	if depth > 0 {
		at = " at " + formatPath(d.idx[:depth])
	}
	return &Error{Input: d.spec.Name, Message: "Invalid value for '" + d.spec.Name + "'" + at + ": " + msg}
}

func (d *decoder) typeErr(expected string) *Error {
	return &Error{Input: d.spec.Name, Message: "Invalid input type for '" + d.spec.Name + "': expected " + expected}
}

// kindAt classifies the value starting at d.pos for an error message,
// checking literals so that garbage is reported as malformed JSON.
func (d *decoder) kindAt() (string, *Error) {
	if d.pos >= len(d.b) {
		return "", syntaxErr(len(d.b), "unexpected end of input")
	}
	switch c := d.b[d.pos]; {
	case c == '"':
		return "a string", nil
	case c == '{':
		return "an object", nil
	case c == '[':
		return "an array", nil
	case c == '-' || (c >= '0' && c <= '9'):
		if _, _, bad := scanNumber(d.b, d.pos); bad >= 0 {
			return "", d.badNumber(bad)
		}
		return "a number", nil
	case c == 't' || c == 'f' || c == 'n':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		if err := d.literal(lit); err != nil {
			return "", err
		}
		d.pos -= len(lit)
		if c == 'n' {
			return "null", nil
		}
		return "a boolean", nil
	}
	return "", d.unexpected("looking for beginning of value")
}

// literal consumes the keyword lit at d.pos.
func (d *decoder) literal(lit string) *Error {
	for i := 0; i < len(lit); i++ {
		p := d.pos + i
		if p >= len(d.b) {
			return syntaxErr(p, "unexpected end of input")
		}
		if d.b[p] != lit[i] {
			return syntaxErr(p, "invalid character "+quoteChar(d.b[p])+" in literal "+lit)
		}
	}
	d.pos += len(lit)
	return nil
}

func (d *decoder) badNumber(bad int) *Error {
	if bad >= len(d.b) {
		return syntaxErr(bad, "unexpected end of input")
	}
	return syntaxErr(bad, "invalid character "+quoteChar(d.b[bad])+" in numeric literal")
}

// wrongKind reports the element at d.pos (at depth) that is not of the
// input's element type.
func (d *decoder) wrongKind(depth int) *Error {
	kind, err := d.kindAt()
	if err != nil {
		return err
	}
	return d.valueErr(depth, "expected "+elemNoun(d.dt)+", got "+kind)
}

// literalText is the number's text for an error message, shortened.
func literalText(s []byte) string {
	if len(s) > 40 {
		return string(s[:40]) + "..."
	}
	return string(s)
}

func (d *decoder) numErr(depth int, st numStatus, s []byte) *Error {
	if st == numNotInt {
		return d.valueErr(depth, literalText(s)+" is not an integer ("+d.dt.String()+")")
	}
	return d.valueErr(depth, literalText(s)+" is out of range for "+d.dt.String())
}

// resetScratch empties the scratch buffer of the current element type, or
// gives the value a buffer of its own when a size hint is pending.
func (d *decoder) resetScratch() {
	n := d.hint
	d.hint = 0
	d.owned = n > 0 && d.dt != tensor.String
	switch d.dt {
	case tensor.Float32:
		resetSlice(&d.f32, n)
	case tensor.Float64:
		resetSlice(&d.f64, n)
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		resetSlice(&d.u16, n)
	case tensor.Int8:
		resetSlice(&d.i8, n)
	case tensor.Int16:
		resetSlice(&d.i16, n)
	case tensor.Int32:
		resetSlice(&d.i32, n)
	case tensor.Int64:
		resetSlice(&d.i64, n)
	case tensor.Uint8:
		resetSlice(&d.u8, n)
	case tensor.Uint32:
		resetSlice(&d.u32, n)
	case tensor.Uint64:
		resetSlice(&d.u64, n)
	case tensor.Bool:
		resetSlice(&d.bools, n)
	case tensor.String:
		d.arena = d.arena[:0]
		d.ends = d.ends[:0]
	}
}

// resetSlice empties *s for a new value: a slice of capacity hint that the
// value will own (large ones from tensor.MakeSlice, so the tensor's user
// may recycle it), or the decoder's pooled one emptied when hint ≤ 0.
func resetSlice[T tensor.Number](s *[]T, hint int64) {
	if hint > 0 {
		*s = tensor.MakeSlice[T](int(hint))[:0]
		return
	}
	*s = (*s)[:0]
}

// elem parses one element at d.pos (an element at depth, whose index path
// is d.idx[:depth]) and appends it to the scratch buffer.
func (d *decoder) elem(depth int) *Error {
	b := d.b
	c := b[d.pos]
	switch d.dt {
	case tensor.Bool:
		// Inline: an element of 4 or 5 bytes cannot pay for a call.
		switch {
		case c == 't' && d.pos+4 <= len(b) && string(b[d.pos:d.pos+4]) == "true":
			d.bools = append(d.bools, true)
			d.pos += 4
		case c == 'f' && d.pos+5 <= len(b) && string(b[d.pos:d.pos+5]) == "false":
			d.bools = append(d.bools, false)
			d.pos += 5
		default:
			return d.wrongKind(depth)
		}
		return nil
	case tensor.String:
		return d.stringElem(depth, c)
	}
	if c != '-' && (c < '0' || c > '9') {
		return d.wrongKind(depth)
	}
	n, end, bad := scanNumber(b, d.pos)
	if bad >= 0 {
		return d.badNumber(bad)
	}
	s := b[d.pos:end]
	d.pos = end
	switch d.dt {
	case tensor.Float32:
		v, st := float32Of(&n, s)
		if st != numOK {
			return d.numErr(depth, st, s)
		}
		d.f32 = append(d.f32, v)
	case tensor.Float64:
		v, st := float64Of(&n, s)
		if st != numOK {
			return d.numErr(depth, st, s)
		}
		d.f64 = append(d.f64, v)
	case tensor.Float16, tensor.BFloat16:
		var v uint16
		var st numStatus
		if d.dt == tensor.Float16 {
			v, st = halfOf(&n, s, 5, 10)
		} else {
			v, st = halfOf(&n, s, 8, 7)
		}
		if st != numOK {
			return d.numErr(depth, st, s)
		}
		d.u16 = append(d.u16, v)
	default:
		mag, neg, st := intOf(&n, s, d.dt)
		if st != numOK {
			return d.numErr(depth, st, s)
		}
		v := mag
		if neg {
			v = -mag
		}
		switch d.dt {
		case tensor.Int8:
			d.i8 = append(d.i8, int8(v))
		case tensor.Int16:
			d.i16 = append(d.i16, int16(v))
		case tensor.Int32:
			d.i32 = append(d.i32, int32(v))
		case tensor.Int64:
			d.i64 = append(d.i64, int64(v))
		case tensor.Uint8:
			d.u8 = append(d.u8, uint8(v))
		case tensor.Uint16:
			d.u16 = append(d.u16, uint16(v))
		case tensor.Uint32:
			d.u32 = append(d.u32, uint32(v))
		case tensor.Uint64:
			d.u64 = append(d.u64, v)
		}
	}
	return nil
}

// stringElem parses a string element starting with c into the arena.
func (d *decoder) stringElem(depth int, c byte) *Error {
	if c != '"' {
		return d.wrongKind(depth)
	}
	start := len(d.arena)
	raw, out, end, se, ok := scanString(d.b, d.pos, d.arena)
	if !ok {
		d.arena = out[:start]
		if se.unicode {
			return d.valueErr(depth, se.reason)
		}
		return syntaxErr(se.off, se.reason)
	}
	if n := len(out) - start + len(raw); d.maxString > 0 && n > d.maxString {
		d.arena = out[:start]
		return d.valueErr(depth, fmt.Sprintf("string of %d bytes is longer than the limit of %d bytes", n, d.maxString))
	}
	if raw != nil {
		out = append(out, raw...)
	}
	d.arena = out
	d.ends = append(d.ends, len(out))
	d.pos = end
	return nil
}

// valueKindMatches reports whether the bare value starting with c is of the
// kind the input's elements are.
func valueKindMatches(c byte, dt tensor.DType) bool {
	switch dt {
	case tensor.Bool:
		return c == 't' || c == 'f'
	case tensor.String:
		return c == '"'
	}
	return c == '-' || (c >= '0' && c <= '9')
}

// value parses the value of the input s at d.pos into a tensor.
func (d *decoder) value(s *tensor.Spec) (*tensor.Tensor, error) {
	d.spec, d.dt = s, s.DType
	if d.pos >= len(d.b) {
		return nil, syntaxErr(len(d.b), "unexpected end of input")
	}
	rank0 := s.Shape != nil && len(s.Shape) == 0
	c := d.b[d.pos]
	if c == '[' {
		if rank0 {
			return nil, d.typeErr(scalarNoun(d.dt))
		}
		return d.array(s)
	}
	// A bare value.
	if _, err := d.kindAt(); err != nil {
		return nil, err
	}
	scalarOK := s.Shape == nil || rank0 || (len(s.Shape) == 1 && (s.Shape[0] < 0 || s.Shape[0] == 1))
	if !scalarOK || !valueKindMatches(c, d.dt) {
		if rank0 {
			return nil, d.typeErr(scalarNoun(d.dt))
		}
		return nil, d.typeErr("array")
	}
	d.resetScratch()
	if err := d.elem(0); err != nil {
		return nil, err
	}
	one := [1]int64{1}
	shape := one[:0]
	if len(s.Shape) == 1 {
		shape = one[:]
	}
	return d.tensor(shape), nil
}

// array parses a (nested) array value at d.pos and checks its shape
// against the spec.
func (d *decoder) array(s *tensor.Spec) (*tensor.Tensor, error) {
	if err := d.parseArray(); err != nil {
		return nil, err
	}
	return d.finish(s)
}

// parseArray parses a (nested) array value at d.pos into the scratch
// buffer; d.dims[:d.leaf] is then its shape.
func (d *decoder) parseArray() error {
	d.resetScratch()
	d.leaf = -1
	d.emptyLeaf = false
	for i := range d.dims {
		d.dims[i] = -1
	}
	depth := 0 // arrays open around the value at d.pos
	for {
		// A value at depth.
		if d.pos >= len(d.b) {
			return syntaxErr(len(d.b), "unexpected end of input")
		}
		if d.b[d.pos] == '[' {
			if d.leaf >= 0 && depth >= d.leaf {
				return d.inputErr("expected " + elemNoun(d.dt) + " at " + formatPath(d.idx[:depth]) + ", got an array")
			}
			if depth >= maxArrayDepth {
				return syntaxErr(d.pos, "nesting depth exceeds "+strconv.Itoa(maxNesting))
			}
			d.pos++
			d.idx[depth] = 0
			depth++
			d.skipWS()
			if d.pos < len(d.b) && d.b[d.pos] == ']' {
				d.pos++
				depth--
				if err := d.closeArray(depth, 0); err != nil {
					return err
				}
			} else if depth == d.leaf {
				n, err := d.leafLoop(depth, 0)
				if err != nil {
					return err
				}
				depth--
				if err := d.closeArray(depth, n); err != nil {
					return err
				}
			} else {
				continue
			}
		} else {
			if d.leaf < 0 {
				d.leaf = depth
			} else if depth != d.leaf {
				kind, err := d.kindAt()
				if err != nil {
					return err
				}
				return d.inputErr("expected an array at " + formatPath(d.idx[:depth]) + ", got " + kind)
			}
			if err := d.elem(depth); err != nil {
				return err
			}
			if depth > 0 {
				// The rest of this innermost array goes to the fast loop.
				d.skipWS()
				if d.pos < len(d.b) && d.b[d.pos] == ',' {
					d.pos++
					d.skipWS()
					d.idx[depth-1]++
					n, err := d.leafLoop(depth, d.idx[depth-1])
					if err != nil {
						return err
					}
					depth--
					if err := d.closeArray(depth, n); err != nil {
						return err
					}
				}
			}
		}
		// After a value at depth: a comma or the end of the enclosing array.
		for {
			if depth == 0 {
				return nil
			}
			d.skipWS()
			if d.pos < len(d.b) && d.b[d.pos] == ',' {
				d.pos++
				d.idx[depth-1]++
				d.skipWS()
				break
			}
			if d.pos < len(d.b) && d.b[d.pos] == ']' {
				d.pos++
				depth--
				if err := d.closeArray(depth, d.idx[depth]+1); err != nil {
					return err
				}
				continue
			}
			return d.unexpected("after array element")
		}
	}
}

// leafArray parses the elements of an array whose elements are at depth
// (known to be the leaf depth) up to and including the closing bracket, and
// returns how many there were. d.pos is at the element with index i.
func (d *decoder) leafArray(depth int, i int64) (int64, error) {
	for {
		d.idx[depth-1] = i
		if d.pos >= len(d.b) {
			return 0, syntaxErr(len(d.b), "unexpected end of input")
		}
		if d.b[d.pos] == '[' {
			return 0, d.inputErr("expected " + elemNoun(d.dt) + " at " + formatPath(d.idx[:depth]) + ", got an array")
		}
		if err := d.elem(depth); err != nil {
			return 0, err
		}
		d.skipWS()
		if d.pos < len(d.b) && d.b[d.pos] == ',' {
			d.pos++
			i++
			d.skipWS()
			continue
		}
		if d.pos < len(d.b) && d.b[d.pos] == ']' {
			d.pos++
			return i + 1, nil
		}
		return 0, d.unexpected("after array element")
	}
}

// leafLoop runs the element loop for the input's type.
func (d *decoder) leafLoop(depth int, i int64) (int64, error) {
	switch d.dt {
	case tensor.Float32:
		return d.leafFloat32(depth, i)
	case tensor.Float64:
		return d.leafFloat64(depth, i)
	}
	return d.leafArray(depth, i)
}

// closeArray records that the array at depth k (index path d.idx[:k]) has n
// elements.
func (d *decoder) closeArray(k int, n int64) *Error {
	if d.dims[k] < 0 {
		d.dims[k] = n
	} else if d.dims[k] != n {
		return d.inputErr(fmt.Sprintf("ragged array: element %s has %d items, expected %d", formatPath(d.idx[:k]), n, d.dims[k]))
	}
	if n == 0 && d.leaf < 0 {
		d.leaf = k + 1
		d.emptyLeaf = true
	}
	return nil
}

// finish checks the parsed shape against the spec (applying the batch rule)
// and builds the tensor.
func (d *decoder) finish(s *tensor.Spec) (*tensor.Tensor, error) {
	var buf [maxArrayDepth + 1]int64
	got := d.dims[:d.leaf]
	if s.Shape != nil {
		r := len(s.Shape)
		if d.emptyLeaf && len(got) < r {
			// Empty arrays say nothing about what they would hold: the
			// dimensions below them come from the spec (0 if dynamic), so
			// [] is an empty batch.
			n := copy(buf[:], got)
			for i := n; i < r; i++ {
				buf[i] = max(s.Shape[i], 0)
			}
			got = buf[:r]
		} else if len(got) == r-1 && (s.Shape[0] < 0 || s.Shape[0] == 1) {
			buf[0] = 1
			copy(buf[1:], got)
			got = buf[:r]
		}
		if len(got) != r {
			return nil, &Error{Input: s.Name, Message: fmt.Sprintf("Invalid shape for '%s': expected rank %d %s, got rank %d %s",
				s.Name, r, formatShape(s.Shape), len(got), formatShape(got))}
		}
		for i, want := range s.Shape {
			if want >= 0 && got[i] != want {
				return nil, &Error{Input: s.Name, Message: fmt.Sprintf("Invalid shape for '%s': expected %s, got %s",
					s.Name, formatShape(s.Shape), formatShape(got))}
			}
		}
	}
	return d.tensor(got), nil
}

// tensor builds the result for the current input from the scratch buffer.
// Tensors and shapes of one request share allocations.
func (d *decoder) tensor(shape []int64) *tensor.Tensor {
	if len(d.out) == 0 {
		d.out = make([]tensor.Tensor, d.nspecs)
	}
	t := &d.out[0]
	d.out = d.out[1:]
	if d.shapes == nil || cap(d.shapes)-len(d.shapes) < len(shape) {
		d.shapes = make([]int64, 0, max(len(shape), 4*d.nspecs))
	}
	n := len(d.shapes)
	d.shapes = append(d.shapes, shape...)
	*t = tensor.Tensor{DType: d.dt, Shape: d.shapes[n : n+len(shape) : n+len(shape)], Data: d.result()}
	return t
}

// cloneSlice copies s into a new slice of exactly its length (never nil).
func cloneSlice[T any](s []T) []T {
	if len(s) == 0 {
		return []T{}
	}
	return append([]T(nil), s...)
}

// takeSlice hands s over when the value owns it (the decoder forgets it),
// or copies it out of the pooled scratch buffer.
func takeSlice[T any](owned bool, s *[]T) []T {
	if !owned {
		return cloneSlice(*s)
	}
	out := *s
	*s = nil
	if out == nil {
		out = []T{}
	}
	return out
}

// result gives the tensor the elements of the current value.
func (d *decoder) result() any {
	owned := d.owned
	d.owned = false
	switch d.dt {
	case tensor.Float32:
		return takeSlice(owned, &d.f32)
	case tensor.Float64:
		return takeSlice(owned, &d.f64)
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		return takeSlice(owned, &d.u16)
	case tensor.Int8:
		return takeSlice(owned, &d.i8)
	case tensor.Int16:
		return takeSlice(owned, &d.i16)
	case tensor.Int32:
		return takeSlice(owned, &d.i32)
	case tensor.Int64:
		return takeSlice(owned, &d.i64)
	case tensor.Uint8:
		return takeSlice(owned, &d.u8)
	case tensor.Uint32:
		return takeSlice(owned, &d.u32)
	case tensor.Uint64:
		return takeSlice(owned, &d.u64)
	case tensor.Bool:
		return takeSlice(owned, &d.bools)
	}
	strs := make([]string, len(d.ends))
	all := string(d.arena)
	start := 0
	for i, end := range d.ends {
		strs[i] = all[start:end]
		start = end
	}
	return strs
}

// validateValue checks that a well-formed JSON value starts at d.pos and
// moves past it. It is used only to tell a non-object body from a
// malformed one.
func (d *decoder) validateValue() *Error {
	var stack [maxNesting]byte
	n := 0
	for {
		// Expect a value.
		d.skipWS()
		if d.pos >= len(d.b) {
			return syntaxErr(len(d.b), "unexpected end of input")
		}
		switch c := d.b[d.pos]; {
		case c == '{' || c == '[':
			if n >= maxNesting {
				return syntaxErr(d.pos, "nesting depth exceeds "+strconv.Itoa(maxNesting))
			}
			stack[n] = c
			n++
			d.pos++
			d.skipWS()
			if d.pos < len(d.b) && d.b[d.pos] == c+2 { // '}' or ']'
				d.pos++
				n--
				break
			}
			if c == '{' {
				if err := d.objectKey(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			_, _, end, se, ok := scanString(d.b, d.pos, d.key[:0])
			if !ok {
				return syntaxErr(se.off, se.reason)
			}
			d.pos = end
		case c == '-' || (c >= '0' && c <= '9'):
			_, end, bad := scanNumber(d.b, d.pos)
			if bad >= 0 {
				return d.badNumber(bad)
			}
			d.pos = end
		case c == 't':
			if err := d.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := d.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
		default:
			return d.unexpected("looking for beginning of value")
		}
		// After a value.
		for {
			if n == 0 {
				return nil
			}
			d.skipWS()
			if d.pos >= len(d.b) {
				return syntaxErr(len(d.b), "unexpected end of input")
			}
			c := d.b[d.pos]
			if c == ',' {
				d.pos++
				if stack[n-1] == '{' {
					d.skipWS()
					if err := d.objectKey(); err != nil {
						return err
					}
				}
				break
			}
			if c == stack[n-1]+2 {
				d.pos++
				n--
				continue
			}
			if stack[n-1] == '{' {
				return d.unexpected("after object key:value pair")
			}
			return d.unexpected("after array element")
		}
	}
}

// objectKey validates `"key" :` at d.pos.
func (d *decoder) objectKey() *Error {
	if d.pos >= len(d.b) || d.b[d.pos] != '"' {
		return d.unexpected("looking for beginning of object key string")
	}
	_, _, end, se, ok := scanString(d.b, d.pos, d.key[:0])
	if !ok {
		return syntaxErr(se.off, se.reason)
	}
	d.pos = end
	d.skipWS()
	if d.pos >= len(d.b) || d.b[d.pos] != ':' {
		return d.unexpected("after object key")
	}
	d.pos++
	return nil
}
