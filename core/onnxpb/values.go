package onnxpb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Float16 is an IEEE 754 half-precision value, as its bits.
type Float16 uint16

// Float32 converts h to float32 exactly.
func (h Float16) Float32() float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac * 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// BFloat16 is a bfloat16 value, as its bits (the top half of a float32).
type BFloat16 uint16

// Float32 converts b to float32 exactly.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// ErrExternalData is returned when tensor values are requested from a
// tensor whose data lives in an external file that was not loaded.
var ErrExternalData = errors.New("onnxpb: tensor data is stored externally")

// IsExternal reports whether the tensor's data is stored in an external
// file (data_location = EXTERNAL).
func (t *TensorProto) IsExternal() bool { return t.DataLocation == LocationExternal }

// NumElements returns the number of elements given by Dims (1 for a
// scalar). It fails on negative dims or overflow.
func (t *TensorProto) NumElements() (int, error) {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return 0, fmt.Errorf("onnxpb: tensor %q: negative dimension %d", t.Name, d)
		}
		if d != 0 && n > math.MaxInt32/d {
			return 0, fmt.Errorf("onnxpb: tensor %q: too many elements", t.Name)
		}
		n *= d
	}
	return int(n), nil
}

// Values decodes the tensor's data into a Go slice whose type follows
// DataType: []float32, []float64, []int8, []int16, []int32, []int64,
// []uint8, []uint16, []uint32, []uint64, []bool, []string, []Float16 or
// []BFloat16. The data is taken from raw_data (little endian) when present,
// otherwise from the typed field that onnx.proto assigns to the type
// (int32_data for 8/16-bit types, bool and float16; uint64_data for uint32
// and uint64). The number of values must match Dims. External tensors
// return ErrExternalData; load them first with LoadExternal.
func (t *TensorProto) Values() (any, error) {
	if t.IsExternal() {
		return nil, ErrExternalData
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, err
	}
	if t.DataType == ElemString {
		if len(t.StringData) != n {
			return nil, t.countErr(len(t.StringData), n)
		}
		out := make([]string, n)
		for i, s := range t.StringData {
			out[i] = string(s)
		}
		return out, nil
	}
	size := ElemTypeSize(t.DataType)
	if size == 0 || t.DataType == ElemComplex64 || t.DataType == ElemComplex128 {
		return nil, fmt.Errorf("onnxpb: tensor %q: unsupported data type %s", t.Name, ElemTypeName(t.DataType))
	}
	if t.RawData != nil || n == 0 {
		if len(t.RawData) != n*size {
			return nil, fmt.Errorf("onnxpb: tensor %q: raw_data has %d bytes, want %d (%d x %s)",
				t.Name, len(t.RawData), n*size, n, ElemTypeName(t.DataType))
		}
		return decodeRaw(t.DataType, t.RawData, n), nil
	}
	switch t.DataType {
	case ElemFloat:
		if len(t.FloatData) != n {
			return nil, t.countErr(len(t.FloatData), n)
		}
		return append([]float32(nil), t.FloatData...), nil
	case ElemDouble:
		if len(t.DoubleData) != n {
			return nil, t.countErr(len(t.DoubleData), n)
		}
		return append([]float64(nil), t.DoubleData...), nil
	case ElemInt64:
		if len(t.Int64Data) != n {
			return nil, t.countErr(len(t.Int64Data), n)
		}
		return append([]int64(nil), t.Int64Data...), nil
	case ElemUint32:
		if len(t.Uint64Data) != n {
			return nil, t.countErr(len(t.Uint64Data), n)
		}
		return convertSlice(t.Uint64Data, func(v uint64) uint32 { return uint32(v) }), nil
	case ElemUint64:
		if len(t.Uint64Data) != n {
			return nil, t.countErr(len(t.Uint64Data), n)
		}
		return append([]uint64(nil), t.Uint64Data...), nil
	}
	// The remaining types are carried in int32_data.
	if len(t.Int32Data) != n {
		return nil, t.countErr(len(t.Int32Data), n)
	}
	d := t.Int32Data
	switch t.DataType {
	case ElemInt32:
		return append([]int32(nil), d...), nil
	case ElemInt8:
		return convertSlice(d, func(v int32) int8 { return int8(v) }), nil
	case ElemInt16:
		return convertSlice(d, func(v int32) int16 { return int16(v) }), nil
	case ElemUint8:
		return convertSlice(d, func(v int32) uint8 { return uint8(v) }), nil
	case ElemUint16:
		return convertSlice(d, func(v int32) uint16 { return uint16(v) }), nil
	case ElemBool:
		return convertSlice(d, func(v int32) bool { return v != 0 }), nil
	case ElemFloat16:
		return convertSlice(d, func(v int32) Float16 { return Float16(v) }), nil
	case ElemBFloat16:
		return convertSlice(d, func(v int32) BFloat16 { return BFloat16(v) }), nil
	}
	return nil, fmt.Errorf("onnxpb: tensor %q: unsupported data type %s", t.Name, ElemTypeName(t.DataType))
}

// RawBytes returns the tensor's data as little-endian bytes, the layout
// of raw_data, for fixed-size element types. The result never aliases
// the tensor.
func (t *TensorProto) RawBytes() ([]byte, error) {
	if t.DataType == ElemString {
		return nil, fmt.Errorf("onnxpb: tensor %q: string tensors have no raw bytes", t.Name)
	}
	v, err := t.Values()
	if err != nil {
		return nil, err
	}
	return encodeRaw(v)
}

func (t *TensorProto) countErr(got, want int) error {
	return fmt.Errorf("onnxpb: tensor %q: has %d %s values, dims %v want %d",
		t.Name, got, ElemTypeName(t.DataType), t.Dims, want)
}

func convertSlice[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func decodeRaw(dt int32, b []byte, n int) any {
	le := binary.LittleEndian
	switch dt {
	case ElemFloat:
		return decodeEach(b, n, 4, func(p []byte) float32 { return math.Float32frombits(le.Uint32(p)) })
	case ElemDouble:
		return decodeEach(b, n, 8, func(p []byte) float64 { return math.Float64frombits(le.Uint64(p)) })
	case ElemInt8:
		return decodeEach(b, n, 1, func(p []byte) int8 { return int8(p[0]) })
	case ElemUint8:
		return decodeEach(b, n, 1, func(p []byte) uint8 { return p[0] })
	case ElemBool:
		return decodeEach(b, n, 1, func(p []byte) bool { return p[0] != 0 })
	case ElemInt16:
		return decodeEach(b, n, 2, func(p []byte) int16 { return int16(le.Uint16(p)) })
	case ElemUint16:
		return decodeEach(b, n, 2, func(p []byte) uint16 { return le.Uint16(p) })
	case ElemFloat16:
		return decodeEach(b, n, 2, func(p []byte) Float16 { return Float16(le.Uint16(p)) })
	case ElemBFloat16:
		return decodeEach(b, n, 2, func(p []byte) BFloat16 { return BFloat16(le.Uint16(p)) })
	case ElemInt32:
		return decodeEach(b, n, 4, func(p []byte) int32 { return int32(le.Uint32(p)) })
	case ElemUint32:
		return decodeEach(b, n, 4, func(p []byte) uint32 { return le.Uint32(p) })
	case ElemInt64:
		return decodeEach(b, n, 8, func(p []byte) int64 { return int64(le.Uint64(p)) })
	case ElemUint64:
		return decodeEach(b, n, 8, func(p []byte) uint64 { return le.Uint64(p) })
	}
	return nil
}

func decodeEach[T any](b []byte, n, size int, f func([]byte) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(b[i*size:])
	}
	return out
}

// encodeRaw encodes a slice of a supported element type as little-endian
// bytes.
func encodeRaw(v any) ([]byte, error) {
	b, _, err := encodeRawTyped(v)
	return b, err
}

// encodeRawTyped is encodeRaw that also returns the slice's element type.
func encodeRawTyped(v any) ([]byte, int32, error) {
	le := binary.LittleEndian
	switch s := v.(type) {
	case []float32:
		return encodeEach(s, 4, func(p []byte, x float32) { le.PutUint32(p, math.Float32bits(x)) }), ElemFloat, nil
	case []float64:
		return encodeEach(s, 8, func(p []byte, x float64) { le.PutUint64(p, math.Float64bits(x)) }), ElemDouble, nil
	case []int8:
		return encodeEach(s, 1, func(p []byte, x int8) { p[0] = byte(x) }), ElemInt8, nil
	case []uint8:
		return encodeEach(s, 1, func(p []byte, x uint8) { p[0] = x }), ElemUint8, nil
	case []bool:
		return encodeEach(s, 1, func(p []byte, x bool) {
			if x {
				p[0] = 1
			}
		}), ElemBool, nil
	case []int16:
		return encodeEach(s, 2, func(p []byte, x int16) { le.PutUint16(p, uint16(x)) }), ElemInt16, nil
	case []uint16:
		return encodeEach(s, 2, func(p []byte, x uint16) { le.PutUint16(p, x) }), ElemUint16, nil
	case []Float16:
		return encodeEach(s, 2, func(p []byte, x Float16) { le.PutUint16(p, uint16(x)) }), ElemFloat16, nil
	case []BFloat16:
		return encodeEach(s, 2, func(p []byte, x BFloat16) { le.PutUint16(p, uint16(x)) }), ElemBFloat16, nil
	case []int32:
		return encodeEach(s, 4, func(p []byte, x int32) { le.PutUint32(p, uint32(x)) }), ElemInt32, nil
	case []uint32:
		return encodeEach(s, 4, func(p []byte, x uint32) { le.PutUint32(p, x) }), ElemUint32, nil
	case []int64:
		return encodeEach(s, 8, func(p []byte, x int64) { le.PutUint64(p, uint64(x)) }), ElemInt64, nil
	case []uint64:
		return encodeEach(s, 8, func(p []byte, x uint64) { le.PutUint64(p, x) }), ElemUint64, nil
	}
	return nil, ElemUndefined, fmt.Errorf("onnxpb: unsupported value type %T", v)
}

func encodeEach[T any](s []T, size int, f func([]byte, T)) []byte {
	out := make([]byte, len(s)*size)
	for i, x := range s {
		f(out[i*size:], x)
	}
	return out
}

// NewTensor builds a tensor from a Go slice of one of the types Values
// returns. Numeric and bool data go to raw_data; strings to string_data.
// len(values) must equal the product of dims (dims nil or empty: a scalar,
// one value).
func NewTensor(name string, dims []int64, values any) (*TensorProto, error) {
	t := &TensorProto{Name: name, Dims: append([]int64(nil), dims...)}
	n, err := t.NumElements()
	if err != nil {
		return nil, err
	}
	if s, ok := values.([]string); ok {
		if len(s) != n {
			return nil, t.countErr(len(s), n)
		}
		t.DataType = ElemString
		t.StringData = make([][]byte, len(s))
		for i, v := range s {
			t.StringData[i] = []byte(v)
		}
		return t, nil
	}
	raw, dt, err := encodeRawTyped(values)
	if err != nil {
		return nil, err
	}
	t.DataType = dt
	if len(raw) != n*ElemTypeSize(dt) {
		return nil, t.countErr(len(raw)/ElemTypeSize(dt), n)
	}
	t.RawData = raw
	return t, nil
}

// ExternalRef describes where an external tensor's data is: a file
// relative to the model's directory, a byte offset, and a length (-1 when
// not given: up to the end of the file).
type ExternalRef struct {
	Location string
	Offset   int64
	Length   int64
	Checksum string
}

// External parses the tensor's external_data entries.
func (t *TensorProto) External() (ExternalRef, error) {
	ref := ExternalRef{Length: -1}
	if !t.IsExternal() {
		return ref, fmt.Errorf("onnxpb: tensor %q: data is not external", t.Name)
	}
	for _, e := range t.ExternalData {
		switch e.Key {
		case "location":
			ref.Location = e.Value
		case "offset", "length":
			v, err := strconv.ParseInt(e.Value, 10, 64)
			if err != nil || v < 0 {
				return ref, fmt.Errorf("onnxpb: tensor %q: bad external_data %s %q", t.Name, e.Key, e.Value)
			}
			if e.Key == "offset" {
				ref.Offset = v
			} else {
				ref.Length = v
			}
		case "checksum":
			ref.Checksum = e.Value
		}
	}
	if ref.Location == "" {
		return ref, fmt.Errorf("onnxpb: tensor %q: external_data has no location", t.Name)
	}
	return ref, nil
}

// LoadExternal returns a copy of an external tensor with its data read
// from the file named by its external_data, relative to dir (the model's
// directory), into RawData. The location must stay inside dir. A tensor
// that is not external is returned as is.
func (t *TensorProto) LoadExternal(dir string) (*TensorProto, error) {
	if !t.IsExternal() {
		return t, nil
	}
	ref, err := t.External()
	if err != nil {
		return nil, err
	}
	loc := filepath.FromSlash(ref.Location)
	if filepath.IsAbs(loc) || !filepath.IsLocal(loc) || strings.Contains(ref.Location, "\\") {
		return nil, fmt.Errorf("onnxpb: tensor %q: external data location %q is outside the model directory", t.Name, ref.Location)
	}
	f, err := os.Open(filepath.Join(dir, loc))
	if err != nil {
		return nil, fmt.Errorf("onnxpb: tensor %q: %w", t.Name, err)
	}
	defer f.Close()
	var data []byte
	if ref.Length >= 0 {
		n, err := t.NumElements()
		if err != nil {
			return nil, err
		}
		if want := int64(n) * int64(ElemTypeSize(t.DataType)); ref.Length != want {
			return nil, fmt.Errorf("onnxpb: tensor %q: external length %d, want %d", t.Name, ref.Length, want)
		}
		data = make([]byte, ref.Length)
		if _, err := f.ReadAt(data, ref.Offset); err != nil {
			return nil, fmt.Errorf("onnxpb: tensor %q: reading external data: %w", t.Name, err)
		}
	} else {
		if _, err := f.Seek(ref.Offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("onnxpb: tensor %q: %w", t.Name, err)
		}
		if data, err = io.ReadAll(f); err != nil {
			return nil, fmt.Errorf("onnxpb: tensor %q: reading external data: %w", t.Name, err)
		}
	}
	c := *t
	c.DataLocation = LocationDefault
	c.ExternalData = nil
	c.RawData = data
	return &c, nil
}
