package tensorjson

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// This file holds the hot loops: the element loops of innermost arrays of
// float32 and float64 inputs, with a number scanner specialised for the
// common "short decimal" literal. Anything unusual falls back to the general
// element parser (decoder.elem), which handles every case and every error.

// is8Digits reports whether the 8 little-endian bytes in x are all ASCII digits.
func is8Digits(x uint64) bool {
	return (x&0xF0F0F0F0F0F0F0F0)|(((x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4) == 0x3333333333333333
}

// parse8Digits converts 8 ASCII digits (little-endian in x, first digit in
// the low byte) to their value.
func parse8Digits(x uint64) uint64 {
	x -= 0x3030303030303030
	x = x*10 + x>>8 // pairs: each 16-bit lane holds a two-digit value in its low byte
	const mask = 0x000000FF000000FF
	const mul1 = 100 + 1000000<<32
	const mul2 = 1 + 10000<<32
	return ((x&mask)*mul1 + ((x>>16)&mask)*mul2) >> 32
}

// digitRun is how many of the 8 little-endian bytes in x, from the low
// one, are ASCII digits before the first that is not (8: all of them).
func digitRun(x uint64) int {
	// A byte is a digit when its high nibble is 3 and adding 6 keeps it
	// so. A carry out of a byte (0xFA and up) can only spoil the bytes
	// above it, and that byte is not a digit anyway.
	m := ((x & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030) | (((x + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030)
	// The high bit of each byte that is not zero, without carries between
	// bytes.
	h := (((m & 0x7F7F7F7F7F7F7F7F) + 0x7F7F7F7F7F7F7F7F) | m) & 0x8080808080808080
	return bits.TrailingZeros64(h) >> 3
}

// padDigits moves the n ASCII digits at the low end of the 8 little-endian
// bytes in x to the top and fills the bytes below with '0': leading zeros,
// which leave the value as it is. n is 0 to 8 (0: all '0').
func padDigits(x uint64, n int) uint64 {
	return x<<(64-8*n) | 0x3030303030303030>>(8*n)
}

// digits16 reads the run of up to 16 ASCII digits at b[p:p+16] (16 bytes
// that must be there) 8 at a time, without a branch on how many there are
// (which varies from number to number and would be mispredicted): their
// count and their value.
func digits16(b []byte, p int) (n int, v uint64) {
	x1 := binary.LittleEndian.Uint64(b[p:])
	x2 := binary.LittleEndian.Uint64(b[p+8:])
	n1 := digitRun(x1)
	n2 := digitRun(x2) & -(n1 >> 3) // the second word only after 8 digits
	return n1 + n2, parse8Digits(padDigits(x1, n1))*pow10u[n2] + parse8Digits(padDigits(x2, n2))
}

// negPow10 holds 10^-k rounded to float64.
var negPow10 = [...]float64{
	1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9,
	1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19,
	1e-20, 1e-21, 1e-22,
}

// fastDecimal scans a JSON number of at most 19 digits with an exponent of
// at most 3 digits at b[p]. It returns the digits as an integer, the decimal
// exponent, the sign and the end offset; ok is false when the literal is
// anything else (including malformed), which the caller leaves to the
// general parser.
func fastDecimal(b []byte, p int) (mant uint64, exp int, neg bool, end int, ok bool) {
	if p < len(b) && b[p] == '-' {
		neg = true
		p++
	}
	start := p
	for p < len(b) && b[p]-'0' <= 9 {
		mant = mant*10 + uint64(b[p]-'0')
		p++
	}
	nd := p - start
	if nd == 0 || (nd > 1 && b[start] == '0') {
		return 0, 0, false, 0, false
	}
	if p < len(b) && b[p] == '.' {
		p++
		fs := p
		// Typical float32 output has 7 to 9 fraction digits.
		if p+16 <= len(b) {
			n, frac := digits16(b, p)
			mant = mant*pow10u[n] + frac
			p += n
		} else if p+8 <= len(b) {
			if x := binary.LittleEndian.Uint64(b[p:]); is8Digits(x) {
				mant = mant*100000000 + parse8Digits(x)
				p += 8
			}
		}
		for p < len(b) && b[p]-'0' <= 9 {
			mant = mant*10 + uint64(b[p]-'0')
			p++
		}
		if p == fs {
			return 0, 0, false, 0, false
		}
		exp = fs - p
		nd += p - fs
	}
	if nd > maxMantDigits {
		return 0, 0, false, 0, false
	}
	if p < len(b) && b[p]|0x20 == 'e' {
		p++
		eneg := false
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			eneg = b[p] == '-'
			p++
		}
		es := p
		e := 0
		for p < len(b) && b[p]-'0' <= 9 {
			e = e*10 + int(b[p]-'0')
			p++
		}
		if p == es || p-es > 3 {
			return 0, 0, false, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	return mant, exp, neg, p, true
}

// fastFloat32 converts mant × 10^exp to float32 when that can be done
// cheaply and provably as strconv.ParseFloat(s, 32) would.
func fastFloat32(mant uint64, exp int, neg bool) (float32, bool) {
	if exp < -22 || exp > 22 {
		return 0, false
	}
	f := float64(mant)
	if exp < 0 {
		// Three roundings (mant, 10^-k, product): f is within 3.01 float64
		// ulps of the exact value.
		f *= negPow10[-exp]
	} else {
		f *= pow10tab[exp]
	}
	// Safe unless f is within a few ulps of a point halfway between two
	// float32 values (low 29 mantissa bits = 1<<28; magnitudes reached here
	// are normal for float32) or near the top of the float32 range.
	if low := math.Float64bits(f) & (1<<29 - 1); low-(1<<28-8) <= 16 || f >= 1e38 {
		return 0, false
	}
	r := float32(f)
	if neg {
		r = -r
	}
	return r, true
}

// leafFloat32 is leafArray for float32 inputs.
func (d *decoder) leafFloat32(depth int, i int64) (int64, error) {
	b := d.b
	p := d.pos
	out := d.f32
	for {
		// The common "[-]d.ddd": one integer digit, no exponent, read here
		// without a call; anything else goes to fastDecimal.
		q := p
		neg := q < len(b) && b[q] == '-'
		if neg {
			q++
		}
		ok := false
		var v float32
		if q+18 <= len(b) {
			w := b[q : q+18 : q+18] // a fixed length: no bounds checks below
			if w[0]-'0' <= 9 && w[1] == '.' {
				// digits16, written out: the call would cost 4-5 % of
				// BenchmarkDecode/float32 (it is too large to inline).
				x1 := binary.LittleEndian.Uint64(w[2:10])
				x2 := binary.LittleEndian.Uint64(w[10:18])
				n1 := uint(digitRun(x1))
				n2 := uint(digitRun(x2)) & -(n1 >> 3)
				n := n1 + n2
				if n1 > 0 && n < 16 && w[2+n]|0x20 != 'e' {
					mant := uint64(w[0]-'0')*pow10u[n] + parse8Digits(padDigits(x1, int(n1)))*pow10u[n2] + parse8Digits(padDigits(x2, int(n2)))
					if v, ok = fastFloat32(mant, -int(n), neg); ok {
						p = q + 2 + int(n)
					}
				}
			}
		}
		if !ok {
			var mant uint64
			var exp, end int
			mant, exp, neg, end, ok = fastDecimal(b, p)
			if ok {
				v, ok = fastFloat32(mant, exp, neg)
			}
			if ok {
				p = end
			}
		}
		if ok {
			out = append(out, v)
		} else {
			d.pos, d.f32 = p, out
			d.idx[depth-1] = i
			if p < len(b) && b[p] == '[' {
				return 0, d.inputErr("expected a number at " + formatPath(d.idx[:depth]) + ", got an array")
			}
			if p >= len(b) {
				return 0, d.unexpected("looking for beginning of value")
			}
			if err := d.elem(depth); err != nil {
				return 0, err
			}
			p, out = d.pos, d.f32
		}
		// Separator: usually "," or ", ".
		if p < len(b) && b[p] == ',' {
			p++
			if p < len(b) && b[p] == ' ' {
				p++
			}
			for p < len(b) && isSpace(b[p]) {
				p++
			}
			i++
			continue
		}
		for p < len(b) && isSpace(b[p]) {
			p++
		}
		if p < len(b) && b[p] == ',' {
			p++
			for p < len(b) && isSpace(b[p]) {
				p++
			}
			i++
			continue
		}
		d.f32 = out
		if p < len(b) && b[p] == ']' {
			d.pos = p + 1
			return i + 1, nil
		}
		d.pos = p
		return 0, d.unexpected("after array element")
	}
}

// leafFloat64 is leafArray for float64 inputs.
func (d *decoder) leafFloat64(depth int, i int64) (int64, error) {
	b := d.b
	p := d.pos
	out := d.f64
	for {
		mant, exp, neg, end, ok := fastDecimal(b, p)
		if ok && mant <= 1<<53 && exp >= -22 && exp <= 22 {
			// Clinger's fast path: exact operands, one rounding.
			f := float64(mant)
			if exp < 0 {
				f /= pow10tab[-exp]
			} else {
				f *= pow10tab[exp]
			}
			if neg {
				f = -f
			}
			out = append(out, f)
			p = end
		} else {
			d.pos, d.f64 = p, out
			d.idx[depth-1] = i
			if p < len(b) && b[p] == '[' {
				return 0, d.inputErr("expected a number at " + formatPath(d.idx[:depth]) + ", got an array")
			}
			if p >= len(b) {
				return 0, d.unexpected("looking for beginning of value")
			}
			if err := d.elem(depth); err != nil {
				return 0, err
			}
			p, out = d.pos, d.f64
		}
		if p < len(b) && b[p] == ',' {
			p++
			for p < len(b) && isSpace(b[p]) {
				p++
			}
			i++
			continue
		}
		for p < len(b) && isSpace(b[p]) {
			p++
		}
		if p < len(b) && b[p] == ',' {
			p++
			for p < len(b) && isSpace(b[p]) {
				p++
			}
			i++
			continue
		}
		d.f64 = out
		if p < len(b) && b[p] == ']' {
			d.pos = p + 1
			return i + 1, nil
		}
		d.pos = p
		return 0, d.unexpected("after array element")
	}
}
