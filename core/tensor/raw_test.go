package tensor

import (
	"reflect"
	"strings"
	"testing"
)

func TestRawRoundTrip(t *testing.T) {
	tests := []*Tensor{
		{DType: Float32, Shape: []int64{3}, Data: []float32{1.5, -2, 3e38}},
		{DType: Float64, Shape: []int64{2}, Data: []float64{0.1, -1e300}},
		{DType: Float16, Shape: []int64{2}, Data: []uint16{0x3c00, 0xc100}},
		{DType: BFloat16, Shape: []int64{1}, Data: []uint16{0x3f80}},
		{DType: Int8, Shape: []int64{2}, Data: []int8{-128, 127}},
		{DType: Int16, Shape: []int64{2}, Data: []int16{-32768, 32767}},
		{DType: Int32, Shape: []int64{2}, Data: []int32{-1 << 31, 1<<31 - 1}},
		{DType: Int64, Shape: []int64{2}, Data: []int64{-1 << 63, 1<<63 - 1}},
		{DType: Uint8, Shape: []int64{2}, Data: []uint8{0, 255}},
		{DType: Uint16, Shape: []int64{1}, Data: []uint16{65535}},
		{DType: Uint32, Shape: []int64{1}, Data: []uint32{1<<32 - 1}},
		{DType: Uint64, Shape: []int64{1}, Data: []uint64{1<<64 - 1}},
		{DType: Bool, Shape: []int64{3}, Data: []bool{true, false, true}},
		{DType: String, Shape: []int64{3}, Data: []string{"a", "", "grüße"}},
		{DType: Float32, Shape: []int64{0}, Data: []float32{}},
	}
	for _, want := range tests {
		raw := AppendRaw(nil, want)
		if len(raw) != RawSize(want) {
			t.Errorf("%v: %d bytes, RawSize says %d", want.DType, len(raw), RawSize(want))
		}
		got, err := DecodeRaw(want.DType, int64(want.Len()), raw, 0)
		if err != nil {
			t.Fatalf("%v: %v", want.DType, err)
		}
		if !reflect.DeepEqual(got, want.Data) {
			t.Errorf("%v: decoded %v, want %v", want.DType, got, want.Data)
		}
		if want.DType != String && string(RawView(want)) != string(raw) {
			t.Errorf("%v: RawView differs from AppendRaw", want.DType)
		}
	}
	// Little-endian on the wire.
	if raw := AppendRaw(nil, &Tensor{DType: Int32, Data: []int32{1}}); string(raw) != "\x01\x00\x00\x00" {
		t.Errorf("int32 1 = % x", raw)
	}
}

func TestDecodeRawErrors(t *testing.T) {
	tests := []struct {
		dt    DType
		count int64
		raw   []byte
		max   int
		msg   string
	}{
		{Float32, 2, make([]byte, 7), 0, "2 elements of float32 take 8 bytes, got 7"},
		{Float32, 1 << 62, nil, 0, "take more than 2^63 bytes"},
		{Bool, 2, []byte{0, 2}, 0, "bool element 1 is byte 2, expected 0 or 1"},
		{String, 2, []byte{1, 0, 0, 0, 'a', 0, 0, 0}, 0, "string element 1 has no room for its 4-byte length"},
		{String, 3, []byte{0, 0, 0, 0}, 0, "3 string elements need at least 12 bytes"},
		{String, 1, []byte{9, 0, 0, 0, 'a'}, 0, "string element 0 is 9 bytes long, past the end of the data"},
		{String, 1, []byte{1, 0, 0, 0, 'a', 'b'}, 0, "1 string elements take 5 bytes, got 6"},
		{String, 1, []byte{2, 0, 0, 0, 'a', 'b'}, 1, "string element 0 is 2 bytes long, over the limit of 1"},
		{Invalid, 1, []byte{0}, 0, "unsupported element type"},
	}
	for _, tt := range tests {
		_, err := DecodeRaw(tt.dt, tt.count, tt.raw, tt.max)
		if _, ok := err.(*RawError); !ok || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("DecodeRaw(%v, %d, % x) = %v, want a RawError with %q", tt.dt, tt.count, tt.raw, err, tt.msg)
		}
	}
}
