//go:build !race

// The tests in this file compare svc's number parsing with strconv's and
// math/big's, literal by literal, in one goroutine. The race detector
// finds races between goroutines: it would find none here, and makes them
// several times slower. make test runs them in a pass of their own without
// it (ci/norace.sh); go test without -race runs them with the rest.

package tensorjson

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

func TestParseFloatBitIdentical(t *testing.T) {
	fixed := []string{
		"0", "-0", "0.0", "-0.0", "0e5", "1", "-1", "0.1", "0.2", "0.3", "1e23", "8.589973e9",
		"3.4028234663852886e38", "3.4028235e38", "3.4028235677973366e38", "3.40282357e38", "-3.4028235e38",
		"1.401298464324817e-45", "7e-46", "7.1e-46", "1e-46", "1.17549435e-38", "1.1754942e-38",
		"1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315807e308", "4.9e-324", "2.4e-324", "2.5e-324",
		"2.2250738585072011e-308", "2.2250738585072012e-308",
		"9007199254740993", "9007199254740992.5", "123456789012345678901234567890",
		"0.000000000000000000000000000001", "1e-22", "1e22", "1e-23", "4.5035996273704955e15",
		"16777217", "16777216.000000000001", "33554435", "0.12345678", "0.99999999", "1.00000005960464477539",
		"1.0000000596046448", "1.00000006", "1.000000059604644775390625", "1.000000059604644775390624",
		"1.000000059604644775390626", "5e-324", "1e400", "-1e400", "1e-400", "123456789e-30",
		"1.5e-45", "0.00000000000000000000000000000000000000000000070064923216240861318958", // float32 tie
		"1.00000000000000000000000000000000000000000000000000000000001",
		"100000000000000000000000000000000000000000000000000000000000000000000001e-70",
		strings.Repeat("1", 800), "0." + strings.Repeat("0", 400) + "1e400",
	}
	for _, s := range fixed {
		checkFloatLiteral(t, s)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < iterations(200000); i++ {
		var s string
		switch i % 6 {
		case 0: // float32 values as clients print them
			s = strconv.FormatFloat(float64(math.Float32frombits(r.Uint32())), 'g', -1, 32)
		case 1: // float64 values, shortest
			s = strconv.FormatFloat(math.Float64frombits(r.Uint64()), 'g', -1, 64)
		case 2: // float32 values printed at float64 precision (numpy tolist)
			s = strconv.FormatFloat(float64(r.Float32()), 'g', -1, 64)
		case 3: // exact halfway points between float32 neighbours, and next to them
			f := math.Float32frombits(r.Uint32() & 0x7f7fffff)
			next := math.Nextafter32(f, float32(math.Inf(1)))
			mid := (float64(f) + float64(next)) / 2
			s = strconv.FormatFloat(mid, 'e', -1, 64) // shortest: may be on either side
			checkFloatLiteral(t, new(big.Float).SetFloat64(mid).Text('e', 60))
			// 17 to 19 digit decimals a hair off the midpoint (on either
			// side): within the fast path, but closer to the midpoint than
			// float64 can resolve.
			for _, nd := range []int{16, 17, 18} {
				checkFloatLiteral(t, new(big.Float).SetFloat64(mid).Text('e', nd))
			}
			checkFloatLiteral(t, strings.Replace(new(big.Float).SetFloat64(mid).Text('e', 80), "e", "1e", 1))
		case 4:
			s = randomNumberLiteral(r)
		case 5: // short decimals with few digits
			s = strconv.Itoa(r.IntN(2000000)-1000000) + "e" + strconv.Itoa(r.IntN(90)-45)
		}
		if s == "NaN" || strings.Contains(s, "Inf") {
			continue
		}
		checkFloatLiteral(t, s)
	}
}

func TestDecodeHalfAgainstBig(t *testing.T) {
	f16 := func(h uint16) float64 { return float64(tensor.Float16ToFloat32(h)) }
	bf16 := func(h uint16) float64 { return float64(tensor.BFloat16ToFloat32(h)) }
	r := rand.New(rand.NewPCG(9, 10))
	var lits []string
	// Exact midpoints between neighbours and decimals just off them, for
	// every positive finite value: the cases double rounding gets wrong.
	for h := uint16(0); h < 0x7bff; h += 1 + uint16(r.IntN(7)) {
		mid := (f16(h) + f16(h+1)) / 2
		e := new(big.Float).SetFloat64(mid).Text('e', 40)
		lits = append(lits, e, strings.Replace(e, "e", "000000000000000000001e", 1), strconv.FormatFloat(mid, 'g', -1, 64))
		if h > 0 {
			lits = append(lits, strconv.FormatFloat(math.Nextafter(mid, 0), 'g', -1, 64))
		}
	}
	for h := uint16(0); h < 0x7f7f; h += 1 + uint16(r.IntN(13)) {
		mid := (bf16(h) + bf16(h+1)) / 2
		e := new(big.Float).SetFloat64(mid).Text('e', 60)
		lits = append(lits, e, strings.Replace(e, "e", "0000000000000000000000000000001e", 1), strconv.FormatFloat(mid, 'g', -1, 64))
	}
	for i := 0; i < iterations(20000); i++ {
		lits = append(lits, randomNumberLiteral(r), strconv.FormatFloat(r.NormFloat64()*1000, 'g', -1, 64),
			strconv.FormatFloat(float64(r.Float32()), 'g', -1, 32))
	}
	lits = append(lits, "65504", "65519.99999999999999999", "65520", "65520.0000000000000000001", "-65520", "1e-8", "2.98023223876953125e-8",
		"2.98023223876953125000000001e-8", "2.98023223876953124999999999e-8", "3.3895313892515355e38", "3.3961775292304957e38", "3.3961775292304958e38")
	for _, s := range lits {
		for _, c := range []struct {
			d    tensor.DType
			to   func(uint16) float64
			from func(float64) uint16
			max  uint16
		}{{tensor.Float16, f16, tensor.Float64ToFloat16, 0x7bff}, {tensor.BFloat16, bf16, tensor.Float64ToBFloat16, 0x7f7f}} {
			want, ok := halfReference(s, c.to, c.from, c.max)
			out, err := decodeObject([]byte(`{"x": [`+s+`]}`), []tensor.Spec{spec("x", c.d, -1)})
			if !ok {
				if err == nil || !strings.Contains(err.Error(), "out of range for "+c.d.String()) {
					t.Fatalf("%v %s: got %v, want out of range", c.d, s, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v %s: %v", c.d, s, err)
			}
			if got := out[0].Data.([]uint16)[0]; got != want && !(got&0x7fff == 0 && want&0x7fff == 0) {
				t.Fatalf("%v %s: got %04x, want %04x", c.d, s, got, want)
			}
		}
	}
}
