package tensor

import (
	"encoding/binary"
	"testing"
)

func fastDecimalLoop(b []byte, p int) (mant uint64, exp int, neg bool, end int, ok bool) {
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

var sink uint64

func benchScan(b *testing.B, f func([]byte, int) (uint64, int, bool, int, bool)) {
	body := imageBody(1)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var s uint64
		p := 0
		for p < len(body) {
			c := body[p]
			if c == '-' || (c >= '0' && c <= '9') {
				m, e, _, end, ok := f(body, p)
				if !ok {
					b.Fatal("x")
				}
				s += m + uint64(e)
				p = end
			} else {
				p++
			}
		}
		sink = s
	}
}
func BenchmarkScanLoop(b *testing.B) { benchScan(b, fastDecimalLoop) }
func BenchmarkScanSWAR(b *testing.B) { benchScan(b, fastDecimal) }

func digitsRun(b []byte, p int, mant uint64) (uint64, int) {
	for p+1 < len(b) {
		d1 := b[p] - '0'
		d2 := b[p+1] - '0'
		if d1 > 9 {
			return mant, p
		}
		if d2 > 9 {
			return mant*10 + uint64(d1), p + 1
		}
		mant = mant*100 + uint64(d1)*10 + uint64(d2)
		p += 2
	}
	for p < len(b) && b[p]-'0' <= 9 {
		mant = mant*10 + uint64(b[p]-'0')
		p++
	}
	return mant, p
}

func fastDecimal2(b []byte, p int) (mant uint64, exp int, neg bool, end int, ok bool) {
	if p < len(b) && b[p] == '-' {
		neg = true
		p++
	}
	start := p
	mant, p = digitsRun(b, p, 0)
	nd := p - start
	if nd == 0 || (nd > 1 && b[start] == '0') {
		return 0, 0, false, 0, false
	}
	if p < len(b) && b[p] == '.' {
		p++
		fs := p
		mant, p = digitsRun(b, p, mant)
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

func fastDecimal3(b []byte, p int) (mant uint64, exp int, neg bool, end int, ok bool) {
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
		if p+8 <= len(b) {
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
func BenchmarkScanTwo(b *testing.B) { benchScan(b, fastDecimal2) }
func BenchmarkScanIs8(b *testing.B) { benchScan(b, fastDecimal3) }
