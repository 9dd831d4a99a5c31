package tensorjson

import (
	"math"
	"strconv"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// FuzzParseNumber checks number parsing for every numeric type against
// strconv (floats, bit for bit) and math/big (integers).
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.0", "1.5", "1e23", "9007199254740993", "0.1e-10", "3.4028235e38",
		"65520", "-1e400", "18446744073709551615", "1.00000005960464477539", "123456789012345678901234567890e-10"} {
		f.Add(s)
	}
	f.Fuzz(checkNumberLiteral)
}

// checkNumberLiteral is the body of FuzzParseNumber.
func checkNumberLiteral(t *testing.T, s string) {
	{
		if _, end, bad := scanNumber([]byte(s), 0); bad >= 0 || end != len(s) {
			return // not a JSON number
		}
		if len(s) > 2000 {
			return
		}
		checkFloatLiteral(t, s)
		if _, e := decimalDigits([]byte(s), nil); e > 400 || e < -400 {
			return // math/big would take too long; the values are 0 or out of range
		}
		for _, d := range []tensor.DType{tensor.Int8, tensor.Int64, tensor.Uint32, tensor.Uint64} {
			checkIntLiteral(t, s, d)
		}
		for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
			to := map[tensor.DType]func(uint16) float64{
				tensor.Float16:  func(h uint16) float64 { return float64(tensor.Float16ToFloat32(h)) },
				tensor.BFloat16: func(h uint16) float64 { return float64(tensor.BFloat16ToFloat32(h)) },
			}[d]
			from := map[tensor.DType]func(float64) uint16{tensor.Float16: tensor.Float64ToFloat16, tensor.BFloat16: tensor.Float64ToBFloat16}[d]
			maxBits := map[tensor.DType]uint16{tensor.Float16: 0x7bff, tensor.BFloat16: 0x7f7f}[d]
			want, ok := halfReference(s, to, from, maxBits)
			out, err := decodeObject([]byte(`{"x": `+s+`}`), []tensor.Spec{{Name: "x", DType: d, Shape: []int64{}}})
			if !ok {
				if err == nil {
					t.Fatalf("%v %s: want out of range", d, s)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v %s: %v", d, s, err)
			}
			if got := out[0].Data.([]uint16)[0]; got != want && !(got&0x7fff == 0 && want&0x7fff == 0) {
				t.Fatalf("%v %s: got %04x, want %04x", d, s, got, want)
			}
		}
		// Encoding the float64 value and reading it back is exact.
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) {
			enc := appendFloat64(nil, v)
			if back, _ := strconv.ParseFloat(string(enc), 64); math.Float64bits(back) != math.Float64bits(v) {
				t.Fatalf("%s: encoded as %s", s, enc)
			}
		}
	}
}

// FuzzEncodeRoundTrip encodes tensors whose elements are fuzzed bit
// patterns and checks that decoding the JSON gives them back exactly (NaN
// and ±Inf, written as null, are skipped).
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 128, 1, 0, 0, 0, 255, 255, 127, 127}, uint8(0))
	f.Add([]byte("0123456789abcdef"), uint8(1))
	f.Add([]byte{0, 60, 255, 123, 1, 0}, uint8(2))
	f.Add([]byte{128, 63, 127, 127}, uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8) {
		var tt *tensor.Tensor
		switch sel % 4 {
		case 0:
			v := make([]float32, 0, len(raw)/4)
			for i := 0; i+4 <= len(raw); i += 4 {
				x := math.Float32frombits(uint32(raw[i]) | uint32(raw[i+1])<<8 | uint32(raw[i+2])<<16 | uint32(raw[i+3])<<24)
				if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
					v = append(v, x)
				}
			}
			tt = &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(len(v))}, Data: v}
		case 1:
			v := make([]float64, 0, len(raw)/8)
			for i := 0; i+8 <= len(raw); i += 8 {
				var u uint64
				for k := 7; k >= 0; k-- {
					u = u<<8 | uint64(raw[i+k])
				}
				if x := math.Float64frombits(u); !math.IsNaN(x) && !math.IsInf(x, 0) {
					v = append(v, x)
				}
			}
			tt = &tensor.Tensor{DType: tensor.Float64, Shape: []int64{int64(len(v))}, Data: v}
		case 2, 3:
			d, limit := tensor.Float16, uint16(0x7c00)
			if sel%4 == 3 {
				d, limit = tensor.BFloat16, 0x7f80
			}
			v := make([]uint16, 0, len(raw)/2)
			for i := 0; i+2 <= len(raw); i += 2 {
				if h := uint16(raw[i]) | uint16(raw[i+1])<<8; h&0x7fff < limit {
					v = append(v, h)
				}
			}
			tt = &tensor.Tensor{DType: d, Shape: []int64{int64(len(v))}, Data: v}
		}
		enc := AppendJSON([]byte(`{"t": `), tt)
		enc = append(enc, '}')
		out, err := decodeObject(enc, []tensor.Spec{{Name: "t", DType: tt.DType, Shape: []int64{-1}}})
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if !sameData(out[0].Data, tt.Data) {
			t.Fatalf("%s: got %v, want %v", enc, out[0].Data, tt.Data)
		}
	})
}
