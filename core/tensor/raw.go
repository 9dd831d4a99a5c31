package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// The raw layout of a tensor's elements, as protocols carry them in
// bytes: little-endian, row-major, no padding; Bool one byte (0 or 1);
// Float16 and BFloat16 as their 16-bit patterns; String elements each as a
// 4-byte little-endian length and the bytes.

// littleEndian is whether this machine stores numbers the way the raw
// layout does, so that elements are copied as they are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// bytesOf views the elements of s as bytes (no copy).
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// fromLE copies n little-endian elements of size bytes into a new slice
// (from MakeSlice: its user may recycle it).
func fromLE[T Number](raw []byte, n, size int, get func([]byte) T) []T {
	out := MakeSlice[T](n)
	if littleEndian {
		copy(bytesOf(out), raw)
		return out
	}
	for i := range out {
		out[i] = get(raw[i*size:])
	}
	return out
}

// RawSize is how many bytes t's elements take in the raw layout.
func RawSize(t *Tensor) int {
	if s, ok := t.Data.([]string); ok {
		n := 0
		for _, e := range s {
			n += 4 + len(e)
		}
		return n
	}
	return t.Len() * t.DType.Size()
}

// AppendRaw appends t's elements to dst in the raw layout.
func AppendRaw(dst []byte, t *Tensor) []byte {
	if s, ok := t.Data.([]string); ok {
		for _, e := range s {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e)))
			dst = append(dst, e...)
		}
		return dst
	}
	if littleEndian {
		return append(dst, RawView(t)...)
	}
	switch d := t.Data.(type) {
	case []int8:
		dst = append(dst, bytesOf(d)...)
	case []uint8:
		dst = append(dst, d...)
	case []bool:
		dst = append(dst, bytesOf(d)...)
	case []int16:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		}
	case []uint16:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint16(dst, v)
		}
	case []int32:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
	case []uint32:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint32(dst, v)
		}
	case []float32:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case []int64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	case []uint64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, v)
		}
	case []float64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	}
	return dst
}

// RawView returns t's elements in the raw layout without copying them
// where the memory layout allows (numbers on a little-endian machine),
// else in a new buffer. The view shares t's memory.
func RawView(t *Tensor) []byte {
	if !littleEndian {
		return AppendRaw(nil, t)
	}
	switch d := t.Data.(type) {
	case []float32:
		return bytesOf(d)
	case []float64:
		return bytesOf(d)
	case []int8:
		return bytesOf(d)
	case []int16:
		return bytesOf(d)
	case []int32:
		return bytesOf(d)
	case []int64:
		return bytesOf(d)
	case []uint8:
		return d
	case []uint16:
		return bytesOf(d)
	case []uint32:
		return bytesOf(d)
	case []uint64:
		return bytesOf(d)
	case []bool:
		return bytesOf(d)
	case []string:
		return AppendRaw(nil, t)
	}
	return nil
}

// RawError says why bytes are not the raw layout of a tensor's elements.
// Its message names no protocol; callers add which input it is.
type RawError struct{ Message string }

func (e *RawError) Error() string { return e.Message }

func rawErrorf(format string, args ...any) *RawError {
	return &RawError{Message: fmt.Sprintf(format, args...)}
}

// DecodeRaw reads count elements of type dt from raw, which must hold
// exactly them, into a new slice of dt's Data type. maxString bounds the
// length of one String element (0 = any). Errors are *RawError.
func DecodeRaw(dt DType, count int64, raw []byte, maxString int) (any, error) {
	if dt == String {
		return decodeRawStrings(count, raw, maxString)
	}
	size := int64(dt.Size())
	if size == 0 {
		return nil, rawErrorf("unsupported element type %v", dt)
	}
	if count > int64(len(raw))/size || count*size != int64(len(raw)) {
		need := "more than 2^63"
		if count <= math.MaxInt64/size {
			need = fmt.Sprint(count * size)
		}
		return nil, rawErrorf("%d elements of %v take %s bytes, got %d", count, dt, need, len(raw))
	}
	n := int(count)
	switch dt {
	case Float32:
		return fromLE(raw, n, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }), nil
	case Float64:
		return fromLE(raw, n, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }), nil
	case Float16, BFloat16, Uint16:
		return fromLE(raw, n, 2, binary.LittleEndian.Uint16), nil
	case Int8:
		return fromLE(raw, n, 1, func(b []byte) int8 { return int8(b[0]) }), nil
	case Int16:
		return fromLE(raw, n, 2, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) }), nil
	case Int32:
		return fromLE(raw, n, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }), nil
	case Int64:
		return fromLE(raw, n, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }), nil
	case Uint8:
		out := MakeSlice[uint8](n)
		copy(out, raw)
		return out, nil
	case Uint32:
		return fromLE(raw, n, 4, binary.LittleEndian.Uint32), nil
	case Uint64:
		return fromLE(raw, n, 8, binary.LittleEndian.Uint64), nil
	case Bool:
		b := MakeSlice[bool](n)
		for i, v := range raw {
			if v > 1 {
				return nil, rawErrorf("bool element %d is byte %d, expected 0 or 1", i, v)
			}
			b[i] = v == 1
		}
		return b, nil
	}
	return nil, rawErrorf("unsupported element type %v", dt)
}

// decodeRawStrings reads count length-prefixed strings that fill raw.
func decodeRawStrings(count int64, raw []byte, maxString int) ([]string, error) {
	if count > int64(len(raw))/4 {
		return nil, rawErrorf("%d string elements need at least %d bytes (a 4-byte length each), got %d", count, count*4, len(raw))
	}
	out := make([]string, count)
	all := string(raw) // one copy for every element
	p := 0
	for i := range out {
		if len(raw)-p < 4 {
			return nil, rawErrorf("string element %d has no room for its 4-byte length", i)
		}
		l := int64(binary.LittleEndian.Uint32(raw[p:]))
		p += 4
		if l > int64(len(raw)-p) {
			return nil, rawErrorf("string element %d is %d bytes long, past the end of the data", i, l)
		}
		if maxString > 0 && l > int64(maxString) {
			return nil, rawErrorf("string element %d is %d bytes long, over the limit of %d", i, l, maxString)
		}
		out[i] = all[p : p+int(l)]
		p += int(l)
	}
	if p != len(raw) {
		return nil, rawErrorf("%d string elements take %d bytes, got %d", count, p, len(raw))
	}
	return out, nil
}
