package tensor

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fuzzSpecs are the input sets FuzzDecodeRequest picks from.
var fuzzSpecs = [][]Spec{
	{{Name: "input", DType: Float32, Shape: []int64{-1, 4}, Required: true}},
	{{Name: "x", DType: Float32}},
	{
		{Name: "ids", DType: Int64, Shape: []int64{-1, -1}, Required: true},
		{Name: "mask", DType: Uint8, Shape: []int64{-1, -1}},
		{Name: "s", DType: String, Shape: []int64{-1}},
		{Name: "b", DType: Bool, Shape: []int64{}},
	},
	{
		{Name: "a", DType: Float16, Shape: []int64{2, -1}},
		{Name: "b", DType: BFloat16, Shape: []int64{-1}},
		{Name: "c", DType: Float64, Shape: []int64{1}},
		{Name: "d", DType: Int8, Shape: nil},
	},
	{
		{Name: "i16", DType: Int16, Shape: []int64{-1, 2, 2}},
		{Name: "i32", DType: Int32, Shape: []int64{}},
		{Name: "u16", DType: Uint16, Shape: nil},
		{Name: "u32", DType: Uint32, Shape: []int64{3}},
		{Name: "u64", DType: Uint64, Shape: []int64{-1}},
		{Name: "s", DType: String, Shape: []int64{}},
	},
}

// dataTypes is the Go type of Data for each DType.
var dataTypes = map[DType]reflect.Type{
	Float32: reflect.TypeFor[[]float32](), Float64: reflect.TypeFor[[]float64](),
	Float16: reflect.TypeFor[[]uint16](), BFloat16: reflect.TypeFor[[]uint16](),
	Int8: reflect.TypeFor[[]int8](), Int16: reflect.TypeFor[[]int16](),
	Int32: reflect.TypeFor[[]int32](), Int64: reflect.TypeFor[[]int64](),
	Uint8: reflect.TypeFor[[]uint8](), Uint16: reflect.TypeFor[[]uint16](),
	Uint32: reflect.TypeFor[[]uint32](), Uint64: reflect.TypeFor[[]uint64](),
	Bool: reflect.TypeFor[[]bool](), String: reflect.TypeFor[[]string](),
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`), uint8(0))
	f.Add([]byte(`{"x": [[[1e3]]]}`), uint8(1))
	f.Add([]byte(`{"ids": [[101, 2023]], "s": ["a\u00e9"], "b": true}`), uint8(2))
	f.Add([]byte(`{"a": [[1, 2], [3, 4]], "b": [1.5e38], "c": 0.1, "d": [[-128]]}`), uint8(3))
	f.Add([]byte(`{"i16": [[1, 2], [3, 4]], "u64": [18446744073709551615]}`), uint8(4))
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		specs := fuzzSpecs[int(sel)%len(fuzzSpecs)]
		out, err := DecodeRequest(body, specs)
		out2, err2 := DecodeRequest(body, specs)
		if !reflect.DeepEqual(err, err2) || !reflect.DeepEqual(out, out2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is %T, not *Error: %v", err, err)
			}
			if e.Message == "" || len(e.Message) > 600 {
				t.Fatalf("bad message length %d: %q", len(e.Message), e.Message)
			}
			if out != nil {
				t.Fatal("tensors with an error")
			}
			if !json.Valid(body) {
				return
			}
			// Valid JSON: only our own rules (or the depth limit) may refuse it.
			if strings.HasPrefix(e.Message, "Invalid JSON body") && !strings.Contains(e.Message, "nesting depth") {
				t.Fatalf("valid JSON refused as malformed: %s", e.Message)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
		if len(out) != len(specs) {
			t.Fatalf("%d tensors for %d specs", len(out), len(specs))
		}
		for i, tt := range out {
			s := specs[i]
			if tt == nil {
				if s.Required {
					t.Fatalf("required input %s missing", s.Name)
				}
				continue
			}
			if tt.DType != s.DType {
				t.Fatalf("%s: dtype %v", s.Name, tt.DType)
			}
			if reflect.TypeOf(tt.Data) != dataTypes[s.DType] {
				t.Fatalf("%s: data %T for %v", s.Name, tt.Data, s.DType)
			}
			if tt.Shape == nil {
				t.Fatalf("%s: nil shape", s.Name)
			}
			n := 1
			for _, d := range tt.Shape {
				if d < 0 {
					t.Fatalf("%s: negative dim in %v", s.Name, tt.Shape)
				}
				n *= int(d)
			}
			if tt.Len() != n {
				t.Fatalf("%s: Len %d, shape %v", s.Name, tt.Len(), tt.Shape)
			}
			if s.Shape != nil {
				if len(tt.Shape) != len(s.Shape) {
					t.Fatalf("%s: shape %v for spec %v", s.Name, tt.Shape, s.Shape)
				}
				for j, d := range s.Shape {
					if d >= 0 && tt.Shape[j] != d {
						t.Fatalf("%s: shape %v for spec %v", s.Name, tt.Shape, s.Shape)
					}
				}
			}
			// Decoded values are finite, encode to valid JSON and decode back
			// to the same tensor.
			enc := AppendJSON(nil, tt)
			if !json.Valid(enc) {
				t.Fatalf("%s: invalid encoding %s", s.Name, enc)
			}
			back, err := DecodeRequest(append(append([]byte(`{"`+s.Name+`": `), enc...), '}'),
				[]Spec{{Name: s.Name, DType: s.DType, Shape: tt.Shape}})
			if err != nil {
				t.Fatalf("%s: re-decoding %s: %v", s.Name, enc, err)
			}
			if !reflect.DeepEqual(back[0].Shape, tt.Shape) || !sameData(back[0].Data, tt.Data) {
				t.Fatalf("%s: round trip %v %v -> %v %v", s.Name, tt.Shape, tt.Data, back[0].Shape, back[0].Data)
			}
		}
	})
}

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
		for _, d := range []DType{Int8, Int64, Uint32, Uint64} {
			checkIntLiteral(t, s, d)
		}
		for _, d := range []DType{Float16, BFloat16} {
			to := map[DType]func(uint16) float64{
				Float16:  func(h uint16) float64 { return float64(Float16ToFloat32(h)) },
				BFloat16: func(h uint16) float64 { return float64(BFloat16ToFloat32(h)) },
			}[d]
			from := map[DType]func(float64) uint16{Float16: Float64ToFloat16, BFloat16: Float64ToBFloat16}[d]
			maxBits := map[DType]uint16{Float16: 0x7bff, BFloat16: 0x7f7f}[d]
			want, ok := halfReference(s, to, from, maxBits)
			out, err := DecodeRequest([]byte(`{"x": `+s+`}`), []Spec{{Name: "x", DType: d, Shape: []int64{}}})
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
		var tt *Tensor
		switch sel % 4 {
		case 0:
			v := make([]float32, 0, len(raw)/4)
			for i := 0; i+4 <= len(raw); i += 4 {
				x := math.Float32frombits(uint32(raw[i]) | uint32(raw[i+1])<<8 | uint32(raw[i+2])<<16 | uint32(raw[i+3])<<24)
				if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
					v = append(v, x)
				}
			}
			tt = &Tensor{DType: Float32, Shape: []int64{int64(len(v))}, Data: v}
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
			tt = &Tensor{DType: Float64, Shape: []int64{int64(len(v))}, Data: v}
		case 2, 3:
			d, limit := Float16, uint16(0x7c00)
			if sel%4 == 3 {
				d, limit = BFloat16, 0x7f80
			}
			v := make([]uint16, 0, len(raw)/2)
			for i := 0; i+2 <= len(raw); i += 2 {
				if h := uint16(raw[i]) | uint16(raw[i+1])<<8; h&0x7fff < limit {
					v = append(v, h)
				}
			}
			tt = &Tensor{DType: d, Shape: []int64{int64(len(v))}, Data: v}
		}
		enc := AppendJSON([]byte(`{"t": `), tt)
		enc = append(enc, '}')
		out, err := DecodeRequest(enc, []Spec{{Name: "t", DType: tt.DType, Shape: []int64{-1}}})
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if !sameData(out[0].Data, tt.Data) {
			t.Fatalf("%s: got %v, want %v", enc, out[0].Data, tt.Data)
		}
	})
}
