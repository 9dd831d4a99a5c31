package tensorjson

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/svc-dev/svc/core/tensor"
)

// AppendJSON appends t to dst as nested JSON arrays in t's shape (a rank-0
// tensor as a bare value) and returns the extended buffer.
//
// Floats are written in the shortest form that reads back to the same value
// at the tensor's precision (float16 and bfloat16 at float32 precision);
// NaN and ±Inf, which JSON cannot express, are written as null. Strings are
// escaped: quotes, backslashes, control characters (as \u00XX), U+2028 and
// U+2029; invalid UTF-8 is replaced by U+FFFD.
//
// A nil tensor, and a rank-0 tensor without data, are written as null. A
// tensor whose element count does not match its shape (an invalid tensor)
// is written as a flat array of its elements.
func AppendJSON(dst []byte, t *tensor.Tensor) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	if len(t.Shape) == 0 {
		return appendRow(dst, t.DType, t.Data, 0, 1)
	}
	n := t.Len()
	if numElements(t.Shape) != n {
		dst = append(dst, '[')
		if n > 0 {
			dst = appendRow(dst, t.DType, t.Data, 0, n)
		}
		return append(dst, ']')
	}
	dst, _ = appendDims(dst, t.DType, t.Data, t.Shape, 0)
	return dst
}

// numElements is the product of shape, or -1 if a dimension is negative or
// the product overflows. A shape with a zero dimension is also refused
// (-1) when the empty sub-arrays before it would number more than 1<<30.
func numElements(shape []int64) int {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		if d == 0 {
			return 0
		}
		if n > math.MaxInt/d {
			return -1
		}
		n *= d
		if n > 1<<30 {
			// Too many arrays to write for a tensor that may yet turn out
			// empty; only a full tensor may be this large.
			for _, d2 := range shape {
				if d2 == 0 {
					return -1
				}
			}
		}
	}
	return int(n)
}

// appendDims writes the sub-array of shape dims starting at element off and
// returns the offset just past it.
func appendDims(dst []byte, dt tensor.DType, data any, dims []int64, off int) ([]byte, int) {
	n := int(dims[0])
	dst = append(dst, '[')
	if len(dims) == 1 {
		if n > 0 {
			dst = appendRow(dst, dt, data, off, n)
		}
		return append(dst, ']'), off + n
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, off = appendDims(dst, dt, data, dims[1:], off)
	}
	return append(dst, ']'), off
}

// appendRow writes n comma-separated elements of data starting at off;
// elements the data lacks are written null.
func appendRow(dst []byte, dt tensor.DType, data any, off, n int) []byte {
	have := dataLen(data) - off
	if have < 0 {
		have = 0
	}
	m := min(n, have)
	switch v := data.(type) {
	case []float32:
		dst = appendFloat32s(dst, v[off:off+m])
	case []float64:
		dst = appendEach(dst, v[off:off+m], appendFloat64)
	case []uint16:
		// float16 and bfloat16 bit patterns, or plain uint16 values.
		switch dt {
		case tensor.Float16:
			dst = appendEach(dst, v[off:off+m], func(b []byte, x uint16) []byte { return appendFloat32(b, tensor.Float16ToFloat32(x)) })
		case tensor.BFloat16:
			dst = appendEach(dst, v[off:off+m], func(b []byte, x uint16) []byte { return appendFloat32(b, tensor.BFloat16ToFloat32(x)) })
		default:
			dst = appendEach(dst, v[off:off+m], appendUint[uint16])
		}
	case []int8:
		dst = appendEach(dst, v[off:off+m], appendInt[int8])
	case []int16:
		dst = appendEach(dst, v[off:off+m], appendInt[int16])
	case []int32:
		dst = appendEach(dst, v[off:off+m], appendInt[int32])
	case []int64:
		dst = appendEach(dst, v[off:off+m], appendInt[int64])
	case []uint8:
		dst = appendEach(dst, v[off:off+m], appendUint[uint8])
	case []uint32:
		dst = appendEach(dst, v[off:off+m], appendUint[uint32])
	case []uint64:
		dst = appendEach(dst, v[off:off+m], appendUint[uint64])
	case []bool:
		dst = appendEach(dst, v[off:off+m], appendBool)
	case []string:
		dst = appendEach(dst, v[off:off+m], AppendString)
	default:
		m = 0
	}
	for i := m; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "null"...)
	}
	return dst
}

// appendEach writes the elements of v with one, comma-separated.
func appendEach[T any](dst []byte, v []T, one func([]byte, T) []byte) []byte {
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = one(dst, x)
	}
	return dst
}

func appendInt[T int8 | int16 | int32 | int64](b []byte, x T) []byte {
	return strconv.AppendInt(b, int64(x), 10)
}

func appendUint[T uint8 | uint16 | uint32 | uint64](b []byte, x T) []byte {
	return strconv.AppendUint(b, uint64(x), 10)
}

func appendBool(b []byte, x bool) []byte {
	if x {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func dataLen(data any) int { return (&tensor.Tensor{Data: data}).Len() }

// AppendFloat32Array writes v as a JSON array: each value in its shortest
// round-tripping form, null for NaN and ±Inf, as tensors are written.
func AppendFloat32Array(dst []byte, v []float32) []byte {
	return append(appendFloat32s(append(dst, '['), v), ']')
}

// appendFloat32s writes comma-separated float32 values.
func appendFloat32s(dst []byte, v []float32) []byte {
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendFloat32(dst, x)
	}
	return dst
}

// appendFloat32 writes x in its shortest round-tripping form, null for NaN
// and ±Inf.
func appendFloat32(dst []byte, x float32) []byte {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 {
		return append(dst, "null"...)
	}
	// Small integers print the same with AppendInt, which is much faster.
	if i := int32(x); float32(i) == x && i > -1e6 && i < 1e6 && b != 0x80000000 {
		return strconv.AppendInt(dst, int64(i), 10)
	}
	if b&0x7fffffff != 0 {
		// Write a '-' and keep it only for negative x (no branch: the sign
		// of typical data is unpredictable).
		l := len(dst)
		dst = append(dst, '-')
		if out, ok := shortFloat32(dst[:l+int(b>>31)], math.Float32frombits(b&0x7fffffff)); ok {
			return out
		}
		dst = dst[:l]
	}
	return strconv.AppendFloat(dst, float64(x), 'g', -1, 32)
}

// AppendFloat64 writes x as a JSON number in its shortest round-tripping
// form, null for NaN and ±Inf.
func AppendFloat64(dst []byte, x float64) []byte { return appendFloat64(dst, x) }

// appendFloat64 writes x in its shortest round-tripping form, null for NaN
// and ±Inf.
func appendFloat64(dst []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(dst, "null"...)
	}
	if i := int64(x); float64(i) == x && i > -1e6 && i < 1e6 && math.Float64bits(x) != 1<<63 {
		return strconv.AppendInt(dst, i, 10)
	}
	return strconv.AppendFloat(dst, x, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, U+2028 and U+2029 as \u escapes (for JavaScript),
// invalid UTF-8 as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
