package tensorjson

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// iterations scales the size of randomized tests down for -short and for
// the (much slower) race detector.
func iterations(n int) int {
	if testing.Short() || raceEnabled {
		return n / 10
	}
	return n
}

func TestDecodeBigInts(t *testing.T) {
	cases := []struct {
		d    tensor.DType
		in   string
		want any
	}{
		{tensor.Int64, "9007199254740993", int64(9007199254740993)},
		{tensor.Int64, "-9007199254740993", int64(-9007199254740993)},
		{tensor.Int64, "9223372036854775807", int64(math.MaxInt64)},
		{tensor.Int64, "-9223372036854775808", int64(math.MinInt64)},
		{tensor.Int64, "9223372036854775807.0", int64(math.MaxInt64)},
		{tensor.Int64, "922337203685477580.7e1", int64(math.MaxInt64)},
		{tensor.Int64, "0.9223372036854775807e19", int64(math.MaxInt64)},
		{tensor.Int64, "1234567890123456789", int64(1234567890123456789)},
		{tensor.Int64, "1e18", int64(1e18)},
		{tensor.Int64, "100000000000000000000e-2", int64(1e18)},
		{tensor.Int64, "-0", int64(0)},
		{tensor.Int64, "0e999999999", int64(0)},
		{tensor.Int64, "0.000", int64(0)},
		{tensor.Uint64, "18446744073709551615", uint64(math.MaxUint64)},
		{tensor.Uint64, "12345678901234567890", uint64(12345678901234567890)},
		{tensor.Uint64, "1844674407370955161.5e1", uint64(math.MaxUint64)},
		{tensor.Int32, "2147483647", int32(math.MaxInt32)},
		{tensor.Int32, "1E3", int32(1000)},
		{tensor.Uint32, "4.294967295e9", uint32(math.MaxUint32)},
	}
	for _, c := range cases {
		got := decodeOne(t, spec("x", c.d), `{"x": `+c.in+`}`)
		if v := reflect.ValueOf(got.Data).Index(0).Interface(); v != c.want {
			t.Errorf("%v %s: got %v, want %v", c.d, c.in, v, c.want)
		}
	}
	// Random int64/uint64 values, printed plainly and with exponents.
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		v := int64(r.Uint64()) >> r.IntN(64)
		u := r.Uint64() >> r.IntN(64)
		forms := []string{strconv.FormatInt(v, 10), strconv.FormatInt(v, 10) + "e0", strconv.FormatInt(v, 10) + ".000"}
		if v != 0 {
			forms = append(forms, strconv.FormatInt(v, 10)+"0e-1")
		}
		for _, s := range forms {
			got := decodeOne(t, spec("x", tensor.Int64), `{"x": `+s+`}`)
			if g := got.Data.([]int64)[0]; g != v {
				t.Fatalf("int64 %s: got %d", s, g)
			}
		}
		s := strconv.FormatUint(u, 10)
		if got := decodeOne(t, spec("x", tensor.Uint64), `{"x": `+s+`}`); got.Data.([]uint64)[0] != u {
			t.Fatalf("uint64 %s: got %d", s, got.Data.([]uint64)[0])
		}
	}
}

// intReference decides exactly, with math/big, what a JSON number means
// for an integer type: the value, or "notint" / "range".
func intReference(s string, d tensor.DType) (any, string) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad literal " + s)
	}
	if !r.IsInt() {
		return nil, "notint"
	}
	n := r.Num()
	pos, neg := intLimits(d)
	if n.Sign() < 0 {
		if new(big.Int).Neg(n).Cmp(new(big.Int).SetUint64(neg)) > 0 {
			return nil, "range"
		}
	} else if n.Cmp(new(big.Int).SetUint64(pos)) > 0 {
		return nil, "range"
	}
	var v any
	switch d {
	case tensor.Int8:
		v = int8(n.Int64())
	case tensor.Int16:
		v = int16(n.Int64())
	case tensor.Int32:
		v = int32(n.Int64())
	case tensor.Int64:
		v = n.Int64()
	case tensor.Uint8:
		v = uint8(n.Uint64())
	case tensor.Uint16:
		v = uint16(n.Uint64())
	case tensor.Uint32:
		v = uint32(n.Uint64())
	case tensor.Uint64:
		v = n.Uint64()
	}
	return v, ""
}

// checkIntLiteral compares decoding the literal s as type d with intReference.
func checkIntLiteral(t *testing.T, s string, d tensor.DType) {
	t.Helper()
	want, wantErr := intReference(s, d)
	out, err := decodeObject([]byte(`{"x": [`+s+`]}`), []tensor.Spec{spec("x", d, -1)})
	switch wantErr {
	case "":
		if err != nil {
			t.Fatalf("%v %s: %v, want %v", d, s, err, want)
		}
		if got := reflect.ValueOf(out[0].Data).Index(0).Interface(); got != want {
			t.Fatalf("%v %s: got %v, want %v", d, s, got, want)
		}
	case "notint":
		if err == nil || !strings.Contains(err.Error(), "is not an integer ("+d.String()+")") {
			t.Fatalf("%v %s: got %v, want not an integer", d, s, err)
		}
	case "range":
		if err == nil || !strings.Contains(err.Error(), "is out of range for "+d.String()) {
			t.Fatalf("%v %s: got %v, want out of range", d, s, err)
		}
	}
}

func TestDecodeIntsAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	types := []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64}
	for i := 0; i < iterations(30000); i++ {
		s := randomNumberLiteral(r)
		checkIntLiteral(t, s, types[i%len(types)])
	}
}

// randomNumberLiteral makes valid JSON number literals of many forms.
func randomNumberLiteral(r *rand.Rand) string {
	var b []byte
	if r.IntN(3) == 0 {
		b = append(b, '-')
	}
	nd := 1 + r.IntN(25)
	if r.IntN(4) == 0 {
		b = append(b, '0')
	} else {
		b = append(b, byte('1'+r.IntN(9)))
		for i := 1; i < nd; i++ {
			if r.IntN(3) == 0 {
				b = append(b, '0')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
	}
	if r.IntN(2) == 0 {
		b = append(b, '.')
		for i := 0; i < 1+r.IntN(20); i++ {
			if r.IntN(2) == 0 {
				b = append(b, '0')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
	}
	if r.IntN(2) == 0 {
		b = append(b, "eE"[r.IntN(2)])
		switch r.IntN(3) {
		case 0:
			b = append(b, '-')
		case 1:
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(r.IntN(30)), 10)
	}
	return string(b)
}

// checkFloatLiteral compares decoding the literal s as float32 and float64
// with strconv.ParseFloat, bit for bit (out of range iff ParseFloat
// overflows). Each type is decoded both through the general element parser
// (first innermost array, or a bare value) and through the fast loops used
// for the following innermost arrays.
func checkFloatLiteral(t *testing.T, s string) {
	t.Helper()
	want32, err32 := strconv.ParseFloat(s, 32)
	want64, err64 := strconv.ParseFloat(s, 64)
	for _, c := range []struct {
		d    tensor.DType
		body string
		rank int
		// first: the literal is the first element (else the last).
		first bool
	}{
		{tensor.Float32, `[` + s + `]`, 1, false}, {tensor.Float32, `[0, ` + s + `]`, 1, false}, {tensor.Float32, `[[0], [` + s + `]]`, 2, false}, {tensor.Float32, s, 0, false},
		{tensor.Float64, `[` + s + `]`, 1, false}, {tensor.Float64, `[0,` + s + `]`, 1, false}, {tensor.Float64, `[[0], [` + s + `]]`, 2, false}, {tensor.Float64, s, 0, false},
		// With 16 bytes and more after the literal (the fast scanner reads
		// the digits 8 bytes at a time).
		{tensor.Float32, `[` + s + `, 0.5, 0.25, 0.125, 0.0625]`, 1, true}, {tensor.Float64, `[` + s + `,0.5,0.25,0.125,0.0625]`, 1, true},
	} {
		var sp tensor.Spec
		switch c.rank {
		case 0:
			sp = spec("x", c.d)
		case 1:
			sp = spec("x", c.d, -1)
		default:
			sp = spec("x", c.d, -1, 1)
		}
		out, err := decodeObject([]byte(`{"x": `+c.body+`}`), []tensor.Spec{sp})
		if (c.d == tensor.Float32 && err32 != nil) || (c.d == tensor.Float64 && err64 != nil) {
			if err == nil || !strings.Contains(err.Error(), "is out of range for "+c.d.String()) {
				t.Fatalf("%v %s: got %v, want out of range", c.d, c.body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v %s: %v", c.d, c.body, err)
		}
		at := func(n int) int {
			if c.first {
				return 0
			}
			return n - 1
		}
		switch data := out[0].Data.(type) {
		case []float32:
			if got := data[at(len(data))]; math.Float32bits(got) != math.Float32bits(float32(want32)) {
				t.Fatalf("%v %s: got %v (%08x), want %v (%08x)", c.d, c.body, got, math.Float32bits(got), float32(want32), math.Float32bits(float32(want32)))
			}
		case []float64:
			if got := data[at(len(data))]; math.Float64bits(got) != math.Float64bits(want64) {
				t.Fatalf("%v %s: got %v, want %v", c.d, c.body, got, want64)
			}
		}
	}
}

// halfReference rounds the decimal s to the small float format exactly (ties
// to even), by comparing the candidates around float64 parse with big.Rat.
func halfReference(s string, toFloat64 func(uint16) float64, fromFloat64 func(float64) uint16, maxFinite uint16) (uint16, bool) {
	r, _ := new(big.Rat).SetString(s)
	neg := r.Sign() < 0
	r.Abs(r)
	f, _ := strconv.ParseFloat(s, 64)
	h := fromFloat64(math.Abs(f)) & 0x7fff
	best := uint16(0)
	var bestDist *big.Rat
	for _, c := range []int{int(h) - 1, int(h), int(h) + 1} {
		if c < 0 || c > int(maxFinite)+1 {
			continue
		}
		cv := new(big.Rat)
		if c == int(maxFinite)+1 {
			// The first value past the largest finite one, as if the
			// exponent range went on: rounding there means overflow.
			last := toFloat64(maxFinite)
			prev := toFloat64(maxFinite - 1)
			cv.SetFloat64(last + (last - prev))
		} else {
			cv.SetFloat64(toFloat64(uint16(c)))
		}
		d := new(big.Rat).Sub(r, cv)
		d.Abs(d)
		if bestDist == nil || d.Cmp(bestDist) < 0 || (d.Cmp(bestDist) == 0 && c%2 == 0) {
			best, bestDist = uint16(c), d
		}
	}
	if best > maxFinite {
		return 0, false
	}
	if neg {
		best |= 0x8000
	}
	return best, true
}

// TestDigitRun checks the word-at-a-time digit scanner against a byte loop:
// every byte value at every position after a run of digits, with digits,
// non-digits and bytes that carry (0xFA and up) after it.
func TestDigitRun(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fills := []func() byte{
		func() byte { return byte('0' + r.IntN(10)) },
		func() byte { return byte(r.IntN(256)) },
		func() byte { return byte(0xFA + r.IntN(6)) },
	}
	for pos := 0; pos <= 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range fills {
				var w [8]byte
				for i := range w {
					switch {
					case i < pos:
						w[i] = byte('0' + r.IntN(10))
					case i == pos:
						w[i] = byte(c)
					default:
						w[i] = fill()
					}
				}
				want, value := 0, uint64(0)
				for want < 8 && w[want]-'0' <= 9 {
					value = value*10 + uint64(w[want]-'0')
					want++
				}
				x := binary.LittleEndian.Uint64(w[:])
				if got := digitRun(x); got != want {
					t.Fatalf("digitRun(%q) = %d, want %d", w[:], got, want)
				}
				if got := parse8Digits(padDigits(x, want)); got != value {
					t.Fatalf("parse8Digits(padDigits(%q, %d)) = %d, want %d", w[:], want, got, value)
				}
			}
		}
	}
}

// TestFastDecimalLongFractions: fractions of every length from 1 to 24
// digits, with and without 16 bytes after them, give what strconv gives.
func TestFastDecimalLongFractions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 24; n++ {
		for i := 0; i < 200; i++ {
			var b strings.Builder
			if i%3 == 0 {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(r.IntN(1000)))
			b.WriteByte('.')
			for k := 0; k < n; k++ {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			if i%4 == 1 {
				b.WriteString("e-" + strconv.Itoa(r.IntN(30)))
			}
			checkFloatLiteral(t, b.String())
		}
	}
}
