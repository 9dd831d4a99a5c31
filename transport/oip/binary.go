package oip

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/svc-dev/svc/core/tensor"
)

// The binary tensor data extension: little-endian, row-major, no padding;
// BOOL one byte (0 or 1); BYTES elements as a 4-byte little-endian length
// and the bytes; FP16 and BF16 as their 16-bit patterns.

// littleEndian is whether this machine stores numbers the way the wire
// does, so that tensors are copied as they are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// bytesOf views the elements of s as bytes (no copy).
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// fromLE copies n little-endian elements of size bytes into a new slice.
func fromLE[T any](raw []byte, n, size int, get func([]byte) T) []T {
	out := make([]T, n)
	if littleEndian {
		copy(bytesOf(out), raw)
		return out
	}
	for i := range out {
		out[i] = get(raw[i*size:])
	}
	return out
}

// BinarySize is how many bytes t takes as binary data.
func BinarySize(t *tensor.Tensor) int {
	if s, ok := t.Data.([]string); ok {
		n := 0
		for _, e := range s {
			n += 4 + len(e)
		}
		return n
	}
	return t.Len() * t.DType.Size()
}

// AppendBinary appends t's elements to dst as binary data.
func AppendBinary(dst []byte, t *tensor.Tensor) []byte {
	if s, ok := t.Data.([]string); ok {
		for _, e := range s {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e)))
			dst = append(dst, e...)
		}
		return dst
	}
	if littleEndian {
		return append(dst, binaryView(t)...)
	}
	switch d := t.Data.(type) {
	case []float32:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
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
	case []int64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	case []uint64:
		for _, v := range d {
			dst = binary.LittleEndian.AppendUint64(dst, v)
		}
	}
	return dst
}

// binaryView returns t's binary data without copying it where the memory
// layout allows (numbers on a little-endian machine), else a new buffer.
func binaryView(t *tensor.Tensor) []byte {
	if !littleEndian {
		return AppendBinary(nil, t)
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
	}
	return AppendBinary(nil, t)
}

// DecodeBinary reads a tensor of type dt and shape from raw, which must
// hold exactly its elements. name is the input's, for messages.
func DecodeBinary(name string, dt tensor.DType, shape []int64, raw []byte) (*tensor.Tensor, error) {
	count, cerr := elementCount(name, shape)
	if cerr != nil {
		return nil, cerr
	}
	t := &tensor.Tensor{DType: dt, Shape: shape}
	if dt == tensor.String {
		s, err := decodeBytes(name, shape, count, raw)
		if err != nil {
			return nil, err
		}
		t.Data = s
		return t, nil
	}
	size := int64(dt.Size())
	if size == 0 {
		return nil, fmt.Errorf("oip: input %q has unsupported dtype %v", name, dt)
	}
	if count > int64(len(raw))/size || count*size != int64(len(raw)) {
		return nil, badRequest("Invalid binary data for '%s': shape %s of %s takes %s bytes, binary_data_size is %d",
			name, formatShape(shape), Datatype(dt), sizeText(count, size), len(raw))
	}
	n := int(count)
	switch dt {
	case tensor.Float32:
		t.Data = fromLE(raw, n, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case tensor.Float64:
		t.Data = fromLE(raw, n, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		t.Data = fromLE(raw, n, 2, binary.LittleEndian.Uint16)
	case tensor.Int8:
		t.Data = fromLE(raw, n, 1, func(b []byte) int8 { return int8(b[0]) })
	case tensor.Int16:
		t.Data = fromLE(raw, n, 2, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })
	case tensor.Int32:
		t.Data = fromLE(raw, n, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	case tensor.Int64:
		t.Data = fromLE(raw, n, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case tensor.Uint8:
		t.Data = append([]uint8{}, raw...)
	case tensor.Uint32:
		t.Data = fromLE(raw, n, 4, binary.LittleEndian.Uint32)
	case tensor.Uint64:
		t.Data = fromLE(raw, n, 8, binary.LittleEndian.Uint64)
	case tensor.Bool:
		b := make([]bool, n)
		for i, v := range raw {
			if v > 1 {
				return nil, badRequest("Invalid binary data for '%s': BOOL element %d is byte %d, expected 0 or 1", name, i, v)
			}
			b[i] = v == 1
		}
		t.Data = b
	default:
		return nil, fmt.Errorf("oip: input %q has unsupported dtype %v", name, dt)
	}
	return t, nil
}

// sizeText is count×size, or a note that it overflows.
func sizeText(count, size int64) string {
	if count > math.MaxInt64/size {
		return "more than 2^63"
	}
	return fmt.Sprint(count * size)
}

// decodeBytes reads count length-prefixed BYTES elements that fill raw.
func decodeBytes(name string, shape []int64, count int64, raw []byte) ([]string, error) {
	if count > int64(len(raw))/4 {
		return nil, badRequest("Invalid binary data for '%s': shape %s of BYTES needs at least %s bytes (a 4-byte length per element), binary_data_size is %d",
			name, formatShape(shape), sizeText(count, 4), len(raw))
	}
	out := make([]string, count)
	all := string(raw) // one copy for every element
	p := 0
	for i := range out {
		if len(raw)-p < 4 {
			return nil, badRequest("Invalid binary data for '%s': BYTES element %d has no room for its 4-byte length", name, i)
		}
		l := int64(binary.LittleEndian.Uint32(raw[p:]))
		p += 4
		if l > int64(len(raw)-p) {
			return nil, badRequest("Invalid binary data for '%s': BYTES element %d is %d bytes long, past the end of its binary data", name, i, l)
		}
		out[i] = all[p : p+int(l)]
		p += int(l)
	}
	if p != len(raw) {
		return nil, badRequest("Invalid binary data for '%s': its %d elements take %d bytes, binary_data_size is %d", name, count, p, len(raw))
	}
	return out, nil
}
