package tensorjson

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/svc-dev/svc/core/tensor"
)

// number is a scanned JSON number literal: value = ±mant × 10^exp, exactly
// unless trunc is set (then nonzero digits after the first 19 significant
// ones were dropped and the value is a little larger than that).
type number struct {
	mant  uint64
	exp   int
	neg   bool
	trunc bool
	plain bool // integer part only: no fraction, no exponent
}

// maxMantDigits is how many significant digits fit in number.mant.
const maxMantDigits = 19

// scanNumber scans the JSON number starting at b[i]. It returns the number,
// the offset just past it, and bad = -1, or bad = the offset of the first
// byte that makes the literal invalid (len(b) at end of input).
func scanNumber(b []byte, i int) (n number, end int, bad int) {
	j := i
	if j < len(b) && b[j] == '-' {
		n.neg = true
		j++
	}
	if j >= len(b) {
		return n, j, j
	}
	var mant uint64
	nd, exp := 0, 0
	trunc := false
	switch c := b[j]; {
	case c == '0':
		j++
	case c >= '1' && c <= '9':
		for ; j < len(b); j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			if nd < maxMantDigits {
				mant = mant*10 + uint64(c)
				nd++
			} else {
				exp++
				if c != 0 {
					trunc = true
				}
			}
		}
	default:
		return n, j, j
	}
	n.plain = true
	if j < len(b) && b[j] == '.' {
		n.plain = false
		j++
		start := j
		for ; j < len(b); j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			if nd < maxMantDigits {
				mant = mant*10 + uint64(c)
				exp--
				if mant != 0 {
					nd++
				}
			} else if c != 0 {
				trunc = true
			}
		}
		if j == start {
			return n, j, j
		}
	}
	if j < len(b) && b[j]|0x20 == 'e' {
		n.plain = false
		j++
		eneg := false
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			eneg = b[j] == '-'
			j++
		}
		start := j
		e := 0
		for ; j < len(b); j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			if e < 1e8 {
				e = e*10 + int(c)
			}
		}
		if j == start {
			return n, j, j
		}
		if eneg {
			exp -= e
		} else {
			exp += e
		}
	}
	n.mant, n.exp, n.trunc = mant, exp, trunc
	return n, j, -1
}

var pow10tab = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
	1e20, 1e21, 1e22,
}

// approx returns mant × 10^exp computed with two roundings (relative error
// below 2.0001 × 2^-53), or ok = false when the exponent is outside the
// exactly representable powers of ten. The result is non-negative.
func (n *number) approx() (f float64, ok bool) {
	if n.trunc || n.exp < -22 || n.exp > 22 {
		return 0, false
	}
	f = float64(n.mant)
	if n.exp < 0 {
		f /= pow10tab[-n.exp]
	} else {
		f *= pow10tab[n.exp]
	}
	return f, true
}

// numStatus tells why a number could not be stored.
type numStatus uint8

const (
	numOK numStatus = iota
	numRange
	numNotInt
)

// float64Of converts a scanned number with the text s to float64, bit-for-bit
// as strconv.ParseFloat(s, 64) does.
func float64Of(n *number, s []byte) (float64, numStatus) {
	if n.mant == 0 && !n.trunc {
		if n.neg {
			return math.Copysign(0, -1), numOK
		}
		return 0, numOK
	}
	if n.mant <= 1<<53 {
		// Clinger's fast path: both operands exact, one rounding.
		if f, ok := n.approx(); ok {
			if n.neg {
				f = -f
			}
			return f, numOK
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
	if err != nil {
		return 0, numRange // ErrRange (overflow); syntax was checked already
	}
	return f, numOK
}

// float32Of converts a scanned number to float32, bit-for-bit as
// strconv.ParseFloat(s, 32) does (correct rounding straight from decimal).
func float32Of(n *number, s []byte) (float32, numStatus) {
	if n.mant == 0 && !n.trunc {
		if n.neg {
			return float32(math.Copysign(0, -1)), numOK
		}
		return 0, numOK
	}
	if f, ok := n.approx(); ok && f < 1e38 {
		// f is within 2.0001 float64 ulps of the exact value, so rounding f
		// to float32 gives the correctly rounded result unless f is within a
		// few ulps of a point halfway between two float32 values. For the
		// magnitudes reached here (>= 1e-22) float32 is normal, so those
		// points have the low 29 mantissa bits equal to 1<<28.
		low := math.Float64bits(f) & (1<<29 - 1)
		if low-(1<<28-8) > 16 {
			r := float32(f)
			if n.neg {
				r = -r
			}
			return r, numOK
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 32)
	if err != nil {
		return 0, numRange
	}
	return float32(f), numOK
}

// halfOf converts a scanned number to a small float format (float16 with
// ebits=5, mbits=10; bfloat16 with ebits=8, mbits=7), correctly rounded from
// the decimal value (ties to even). Values that round to infinity are out
// of range.
func halfOf(n *number, s []byte, ebits, mbits uint) (uint16, numStatus) {
	if n.mant == 0 && !n.trunc {
		if n.neg {
			return 1 << (ebits + mbits), numOK
		}
		return 0, numOK
	}
	inf := uint32(1)<<ebits - 1
	inf <<= mbits
	var r uint32
	if f, ok := n.approx(); ok {
		// The exact value lies in [lo, hi]; rounding is monotonic, so if
		// both ends round the same way, so does the value.
		lo := tensor.RoundFloat64(f*(1-0x1p-50), ebits, mbits)
		hi := tensor.RoundFloat64(f*(1+0x1p-50), ebits, mbits)
		if lo == hi {
			r = lo
			goto done
		}
	}
	{
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
		if err != nil {
			return 0, numRange
		}
		f = math.Abs(f)
		r = tensor.RoundFloat64(f, ebits, mbits)
		if isTie(f, ebits, mbits) {
			// f, the float64 nearest the decimal, is exactly halfway between
			// two values of the small format; the decimal itself may be a
			// little above or below it.
			switch cmpDecimal(s, f) {
			case 1:
				r = tensor.RoundFloat64(math.Nextafter(f, math.Inf(1)), ebits, mbits)
			case -1:
				r = tensor.RoundFloat64(math.Nextafter(f, 0), ebits, mbits)
			}
		}
	}
done:
	if r >= inf {
		return 0, numRange
	}
	if n.neg {
		r |= 1 << (ebits + mbits)
	}
	return uint16(r), numOK
}

// isTie reports whether the positive finite f lies exactly halfway between
// two neighbouring values of the small format.
func isTie(f float64, ebits, mbits uint) bool {
	b := math.Float64bits(f)
	exp := int(b>>52) & 0x7ff
	if exp == 0 {
		return false
	}
	m := b&(1<<52-1) | 1<<52
	e := exp - 1023 + 1<<(ebits-1) - 1
	shift := 52 - mbits
	if e < 1 {
		shift += uint(1 - e)
	}
	if shift > 63 {
		return false
	}
	return m&(1<<shift-1) == 1<<(shift-1)
}

// cmpDecimal compares the absolute value of the JSON number s with the
// positive finite f exactly: -1, 0 or +1.
func cmpDecimal(s []byte, f float64) int {
	var buf [800]byte
	fs := strconv.AppendFloat(buf[:0], f, 'e', 767, 64) // exact expansion
	ad, ae := decimalDigits(s, nil)
	bd, be := decimalDigits(fs, make([]byte, 0, 800))
	switch {
	case len(ad) == 0:
		return -1
	case ae != be:
		if ae > be {
			return 1
		}
		return -1
	}
	for i := 0; i < len(ad) && i < len(bd); i++ {
		if ad[i] != bd[i] {
			if ad[i] > bd[i] {
				return 1
			}
			return -1
		}
	}
	switch {
	case len(ad) > len(bd):
		return 1
	case len(ad) < len(bd):
		return -1
	}
	return 0
}

// decimalDigits splits a valid JSON number into its significant digits
// (no leading or trailing zeros) and exponent e, value = 0.digits × 10^e.
func decimalDigits(s []byte, dst []byte) (digits []byte, e int) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	dp := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if s[i] == '0' && len(dst) == 0 {
			continue
		}
		dst = append(dst, s[i])
		dp++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if s[i] == '0' && len(dst) == 0 {
				dp--
				continue
			}
			dst = append(dst, s[i])
		}
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		x := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if x < 1e9 {
				x = x*10 + int(s[i]-'0')
			}
		}
		if neg {
			x = -x
		}
		dp += x
	}
	for len(dst) > 0 && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	return dst, dp
}

// intLimits returns the largest magnitude allowed for positive and for
// negative values of the integer type d.
func intLimits(d tensor.DType) (pos, neg uint64) {
	switch d {
	case tensor.Int8:
		return math.MaxInt8, 1 << 7
	case tensor.Int16:
		return math.MaxInt16, 1 << 15
	case tensor.Int32:
		return math.MaxInt32, 1 << 31
	case tensor.Int64:
		return math.MaxInt64, 1 << 63
	case tensor.Uint8:
		return math.MaxUint8, 0
	case tensor.Uint16:
		return math.MaxUint16, 0
	case tensor.Uint32:
		return math.MaxUint32, 0
	}
	return math.MaxUint64, 0
}

// intOf converts a scanned number with literal s to an integer of type d,
// exactly: it returns the magnitude and whether it is negative. Numbers
// with a fraction or exponent are fine when their value is integral.
func intOf(n *number, s []byte, d tensor.DType) (mag uint64, neg bool, st numStatus) {
	if n.plain && n.exp == 0 {
		mag = n.mant // at most 19 digits: exact
	} else {
		mag, st = intSlow(s)
		if st != numOK {
			return 0, false, st
		}
	}
	if mag == 0 {
		return 0, false, numOK
	}
	pos, negLim := intLimits(d)
	if n.neg {
		if mag > negLim {
			return 0, false, numRange
		}
		return mag, true, numOK
	}
	if mag > pos {
		return 0, false, numRange
	}
	return mag, false, numOK
}

// intSlow computes the magnitude of a valid JSON number exactly.
func intSlow(s []byte) (uint64, numStatus) {
	var buf [24]byte
	digits, e := decimalDigits(s, buf[:0]) // value = 0.digits × 10^e
	if len(digits) == 0 {
		return 0, numOK
	}
	if e < len(digits) {
		return 0, numNotInt
	}
	if e > 20 {
		return 0, numRange
	}
	var mag uint64
	for i := 0; i < e; i++ {
		var d uint64
		if i < len(digits) {
			d = uint64(digits[i] - '0')
		}
		hi, lo := bits.Mul64(mag, 10)
		if hi != 0 {
			return 0, numRange
		}
		var c uint64
		mag, c = bits.Add64(lo, d, 0)
		if c != 0 {
			return 0, numRange
		}
	}
	return mag, numOK
}
