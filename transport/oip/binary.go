package oip

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/svc-dev/svc/core/tensor"
)

// The binary tensor data extension: little-endian, row-major, no padding;
// BOOL one byte (0 or 1); BYTES elements as a 4-byte little-endian length
// and the bytes; FP16 and BF16 as their 16-bit patterns.

// BinarySize is how many bytes t takes as binary data.
func BinarySize(t *tensor.Tensor) int { return tensor.RawSize(t) }

// AppendBinary appends t's elements to dst as binary data.
func AppendBinary(dst []byte, t *tensor.Tensor) []byte { return tensor.AppendRaw(dst, t) }

// binaryView returns t's binary data without copying it where the memory
// layout allows (numbers on a little-endian machine), else a new buffer.
func binaryView(t *tensor.Tensor) []byte { return tensor.RawView(t) }

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
		return nil, invalid("Invalid binary data for '%s': shape %s of %s takes %s bytes, binary_data_size is %d",
			name, tensor.FormatShape(shape), Datatype(dt), sizeText(count, size), len(raw))
	}
	if dt == tensor.Bool {
		for i, v := range raw {
			if v > 1 {
				return nil, invalid("Invalid binary data for '%s': BOOL element %d is byte %d, expected 0 or 1", name, i, v)
			}
		}
	}
	data, err := tensor.DecodeRaw(dt, count, raw, 0)
	if err != nil {
		return nil, fmt.Errorf("oip: input %q: %w", name, err)
	}
	t.Data = data
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
		return nil, invalid("Invalid binary data for '%s': shape %s of BYTES needs at least %s bytes (a 4-byte length per element), binary_data_size is %d",
			name, tensor.FormatShape(shape), sizeText(count, 4), len(raw))
	}
	out := make([]string, count)
	all := string(raw) // one copy for every element
	p := 0
	for i := range out {
		if len(raw)-p < 4 {
			return nil, invalid("Invalid binary data for '%s': BYTES element %d has no room for its 4-byte length", name, i)
		}
		l := int64(binary.LittleEndian.Uint32(raw[p:]))
		p += 4
		if l > int64(len(raw)-p) {
			return nil, invalid("Invalid binary data for '%s': BYTES element %d is %d bytes long, past the end of its binary data", name, i, l)
		}
		out[i] = all[p : p+int(l)]
		p += int(l)
	}
	if p != len(raw) {
		return nil, invalid("Invalid binary data for '%s': its %d elements take %d bytes, binary_data_size is %d", name, count, p, len(raw))
	}
	return out, nil
}
