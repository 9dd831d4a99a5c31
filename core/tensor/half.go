package tensor

import "math"

// Float16ToFloat32 converts an IEEE 754 binary16 bit pattern to float32.
// The conversion is exact; NaN payloads are kept.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		// Zero or subnormal: mant × 2^-24, exact in float32.
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(math.Float32bits(f) | sign)
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Float32ToFloat16 converts f to the nearest IEEE 754 binary16 value (ties to
// even). Values too large become ±Inf, NaN stays NaN.
func Float32ToFloat16(f float32) uint16 {
	return uint16(RoundFloat64(float64(f), 5, 10))
}

// Float64ToFloat16 converts f to the nearest binary16 value (ties to even),
// rounding once (no double rounding through float32).
func Float64ToFloat16(f float64) uint16 {
	return uint16(RoundFloat64(f, 5, 10))
}

// BFloat16ToFloat32 converts a bfloat16 bit pattern to float32 (exact).
func BFloat16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// Float32ToBFloat16 converts f to the nearest bfloat16 value (ties to even).
// Values too large become ±Inf, NaN stays NaN.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and keep the sign
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Float64ToBFloat16 converts f to the nearest bfloat16 value (ties to even),
// rounding once.
func Float64ToBFloat16(f float64) uint16 {
	return uint16(RoundFloat64(f, 8, 7))
}

// RoundFloat64 rounds f to a binary format with ebits exponent bits and mbits
// explicit mantissa bits (ties to even) and returns its bit pattern.
func RoundFloat64(f float64, ebits, mbits uint) uint32 {
	b := math.Float64bits(f)
	sign := uint32(b>>63) << (ebits + mbits)
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	maxField := uint32(1)<<ebits - 1
	if exp == 0x7ff {
		if mant != 0 { // NaN: quiet, keep the top payload bits
			return sign | maxField<<mbits | 1<<(mbits-1) | uint32(mant>>(52-mbits))
		}
		return sign | maxField<<mbits
	}
	if exp == 0 {
		// ±0 or a float64 subnormal, far below the smallest subnormal of
		// any target format: rounds to ±0.
		return sign
	}
	bias := 1<<(ebits-1) - 1
	e := exp - 1023 + bias // biased exponent in the target format
	if e >= int(maxField) {
		return sign | maxField<<mbits // overflow
	}
	var r, rem, half uint64
	if e >= 1 {
		shift := 52 - mbits
		r = uint64(e)<<mbits | mant>>shift
		rem = mant & (1<<shift - 1)
		half = 1 << (shift - 1)
	} else {
		shift := 52 - mbits + uint(1-e)
		if shift > 63 {
			return sign
		}
		m := mant | 1<<52
		r = m >> shift
		rem = m & (1<<shift - 1)
		half = 1 << (shift - 1)
	}
	if rem > half || (rem == half && r&1 == 1) {
		r++ // a carry moves into the exponent, up to ±Inf
	}
	return sign | uint32(r)
}
