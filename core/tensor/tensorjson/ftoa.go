package tensorjson

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// shortFloat32 appends the shortest decimal that reads back as the
// positive, normal float32 x, formatted exactly like
// strconv.AppendFloat(dst, float64(x), 'g', -1, 32). It works in float64
// arithmetic at a decimal scale where every quantity it needs is either
// exact or off by one rounding that provably cannot change the outcome;
// when that cannot be shown (rare), or x is outside the range handled, it
// reports false and the caller uses strconv.
func shortFloat32(dst []byte, x float32) ([]byte, bool) {
	xb := math.Float32bits(x)
	be := int(xb>>23) & 0xff
	if be < 2 || be > 253 {
		return dst, false
	}
	e2 := be - 150 // x = m × 2^e2 with m = mantissa | 1<<23
	// Rounding interval (lo, hi): halfway to the neighbouring float32s.
	// All exact in float64.
	X := float64(x)
	half := math.Float64frombits(uint64(e2-1+1023) << 52)
	hi := X + half
	lo := X - half
	if xb&0x7fffff == 0 {
		lo = X - half/2 // the float32 below is closer
	}
	// s0 = floor(log10(2^e2)): at scale 10^s0 the interval is 1 to 10
	// units wide and X is below 1.7e9 units.
	s0 := (e2 * 78913) >> 18
	if s0 < -22 || s0 > 22 {
		return dst, false
	}
	var ql, qh, qc float64
	if s0 < 0 {
		p := pow10tab[-s0]
		ql, qh, qc = lo*p, hi*p, X*p
	} else {
		p := pow10tab[s0]
		ql, qh, qc = lo/p, hi/p, X/p
	}
	// Each q is the exact quotient rounded once; since integers are
	// representable, ceil/floor of it are exact unless it came out as an
	// integer (the bound may then be exactly on, just above or just below
	// an integer).
	cl, ch := uint64(int64(ql)), uint64(int64(qh)) // truncation = floor
	if float64(int64(cl)) == ql || float64(int64(ch)) == qh {
		return dst, false
	}
	cl++
	if cl > ch {
		return dst, false
	}
	// The exact value is c0 + f in units of 10^s0, with f exact.
	c0i := int64(qc) // truncation = floor for positive values
	f := qc - float64(c0i)
	c0 := uint64(c0i)
	// Rounding c0 + f to the scale we end at needs the most significant
	// digit dropped (last) and whether anything below it is nonzero (rest,
	// kept as the OR of the candidates). At scale s0 that is the first
	// digit of f (10f is exact).
	f10 := f * 10
	last := uint64(int64(f10))
	rest := math.Float64bits(f10 - float64(last))
	// Drop digits while the interval still holds a multiple of ten. The
	// first step is taken about half the time, unpredictably, so it is
	// written for conditional moves; further steps are rare.
	j := 0
	{
		cl1, ch1 := (cl+9)/10, ch/10
		rest1, last1, c01 := rest|last, c0%10, c0/10
		if ch1 >= cl1 {
			cl, ch, rest, last, c0, j = cl1, ch1, rest1, last1, c01, 1
		}
	}
	for j > 0 && ch/10 >= (cl+9)/10 {
		cl, ch = (cl+9)/10, ch/10
		rest |= last
		last = c0 % 10
		c0 /= 10
		j++
	}
	// Round half up: v > 10 means above the half-way point.
	v := 2*last + (rest|-rest)>>63
	if v == 10 {
		// Exactly half-way, or f came out as 0 from a value a hair above or
		// below an integer: cannot tell.
		return dst, false
	}
	c := c0 + (v+5)>>4
	c = min(max(c, cl), ch)
	return appendDecimal(dst, c, s0+j), true
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// putDigits writes the decimal digits of c right-aligned into b, which is
// exactly as long as c has digits.
func putDigits(b []byte, c uint64) {
	i := len(b)
	for c >= 100 {
		q := c / 100
		r := (c - q*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[r], digitPairs[r+1]
		c = q
	}
	if c >= 10 {
		b[i-2], b[i-1] = digitPairs[2*c], digitPairs[2*c+1]
	} else {
		b[i-1] = byte(c) + '0'
	}
}

// encode8 returns the 8 ASCII digits of v < 10^8 (with leading zeros) as
// a little-endian word: the most significant digit in the low byte.
func encode8(v uint64) uint64 {
	x := v/10000 | (v%10000)<<32                // 32-bit lanes: abcd, efgh
	y := (x * 10486 >> 20) & 0x0000007F0000007F // lane / 100: ab, ef
	w := y | (x-y*100)<<16                      // 16-bit lanes: ab, cd, ef, gh
	q := (w * 103 >> 10) & 0x000F000F000F000F   // lane / 10: a, c, e, g
	return q | (w-q*10)<<8 | 0x3030303030303030 // interleave tens and ones
}

// appendDecimal formats c × 10^s (0 < c < 10^17, no trailing zeros) as
// strconv's %g does with the shortest precision.
func appendDecimal(dst []byte, c uint64, s int) []byte {
	t := (bits.Len64(c) * 1233) >> 12 // floor(log10(c)) or one more
	nd := t + 1
	if c < pow10u[t] {
		nd = t
	}
	dp := nd + s // position of the decimal point
	if cap(dst)-len(dst) < 48 {
		dst = slices.Grow(dst, 48)
	}
	l := len(dst)
	out := dst[l : l+48]
	if nd <= 8 {
		// All digits in one word, first digit in the low byte.
		w := encode8(c) >> (8 * (8 - nd))
		exp := dp - 1
		switch {
		case exp < -4 || exp >= 6:
			// d.ddde±XX: the digits with a point after the first.
			n := 1
			c0 := w
			if nd > 1 {
				w = w&0xff | '.'<<8 | (w&^0xff)<<8
				n = nd + 1
			}
			binary.LittleEndian.PutUint64(out, w)
			out[8] = byte(c0 >> 56) // the last digit, pushed out by the point
			out[n] = 'e'
			out[n+1] = '+'
			if exp < 0 {
				out[n+1] = '-'
				exp = -exp
			}
			n += 2
			if exp >= 100 {
				out[n] = byte(exp/100) + '0'
				n++
				exp %= 100
			}
			out[n], out[n+1] = digitPairs[2*exp], digitPairs[2*exp+1]
			return dst[:l+n+2]
		case dp <= 0:
			// 0.000ddd
			binary.LittleEndian.PutUint64(out, 0x3030303030302e30) // "0.000000"
			n := 2 - dp
			binary.LittleEndian.PutUint64(out[n:], w)
			return dst[:l+n+nd]
		case dp >= nd:
			// ddd000
			binary.LittleEndian.PutUint64(out, w|0x3030303030303030&^(1<<(8*nd)-1))
			return dst[:l+dp]
		default:
			// dd.ddd
			m := uint64(1)<<(8*dp) - 1
			binary.LittleEndian.PutUint64(out, w&m|'.'<<(8*dp)|(w&^m)<<8)
			out[8] = byte(w >> 56) // the last digit, pushed out by the point
			return dst[:l+nd+1]
		}
	}
	return appendDecimalSlow(dst, c, nd, dp)
}

// appendDecimalSlow is appendDecimal for the cases its fast paths skip.
func appendDecimalSlow(dst []byte, c uint64, nd, dp int) []byte {
	l := len(dst)
	out := dst[l : l+48]
	var n int
	if exp := dp - 1; exp < -4 || exp >= 6 {
		putDigits(out[1:1+nd], c)
		out[0] = out[1]
		n = 1
		if nd > 1 {
			out[1] = '.'
			n = nd + 1
		}
		out[n] = 'e'
		out[n+1] = '+'
		if exp < 0 {
			out[n+1] = '-'
			exp = -exp
		}
		n += 2
		if exp >= 100 {
			out[n] = byte(exp/100) + '0'
			n++
			exp %= 100
		}
		out[n], out[n+1] = digitPairs[2*exp], digitPairs[2*exp+1]
		return dst[:l+n+2]
	}
	switch {
	case dp <= 0:
		out[0], out[1] = '0', '.'
		n = 2
		for ; dp < 0; dp++ {
			out[n] = '0'
			n++
		}
		putDigits(out[n:n+nd], c)
		n += nd
	case dp >= nd:
		putDigits(out[:nd], c)
		for n = nd; n < dp; n++ {
			out[n] = '0'
		}
	default:
		putDigits(out[1:nd+1], c)
		copy(out[:dp], out[1:dp+1])
		out[dp] = '.'
		n = nd + 1
	}
	return dst[:l+n]
}

var pow10u = [...]uint64{
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}
