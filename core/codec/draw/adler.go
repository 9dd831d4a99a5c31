package draw

import "encoding/binary"

// adler is the Adler-32 checksum (RFC 1950) that ends a zlib stream,
// computed 64 bytes at a time. hash/adler32 adds byte by byte, two
// dependent additions each, which on a drawn 1280×960 PNG is a tenth of
// the encoding. Here the bytes of each 64-bit word are spread into four
// 16-bit lanes (the even bytes, and the odd ones), which are summed lane
// by lane over eight words, as is the running sum before each word; the
// lanes are then folded into s1 and s2 with four multiplications: by a
// constant of ones, whose product's top lane is the lanes' sum, and by
// the bytes' weights in reverse order, whose product's top lane is the
// lanes' dot product with them (no lane, and no carry, overflows 16 bits:
// see update).
type adler struct {
	// s1 is 1 plus the bytes' sum, s2 the sum of s1 after each byte,
	// both reduced modulo adlerMod after every update.
	s1, s2 uint64
}

const (
	adlerMod = 65521
	// adlerRun is the most bytes summed before a reduction: s2 then stays
	// below 2⁴⁸.
	adlerRun = 1 << 20
)

func newAdler() adler { return adler{s1: 1} }

// update adds p to the checksum.
func (a *adler) update(p []byte) {
	const (
		lanes = 0x00ff00ff00ff00ff
		ones  = 0x0001000100010001
		// A word's bytes b0..b7 (b0 first) add 8·b0 + 7·b1 + … + 1·b7 to
		// s2 beyond 8·s1: the even bytes' weights and the odd bytes'.
		evenWeights = 0x0008000600040002
		oddWeights  = 0x0007000500030001
	)
	s1, s2 := a.s1, a.s2
	for len(p) > 0 {
		q := p[:min(len(p), adlerRun)]
		p = p[len(q):]
		for ; len(q) >= 64; q = q[64:] {
			// Over eight words, a lane of even or odd holds at most
			// 8 × 255 (its dot product with the weights, at most
			// 2040 × 20), one of sum at most 8 × 510, and one of before
			// (the sum of the lanes before each word) at most 28 × 510,
			// four of which are 57120.
			var even, odd, sum, before uint64
			w := (*[64]byte)(q)
			for i := 0; i < 64; i += 8 {
				x := binary.LittleEndian.Uint64(w[i : i+8])
				e, o := x&lanes, x>>8&lanes
				before += sum
				sum += e + o
				even += e
				odd += o
			}
			// s2 gains 64·s1, 8 × each word's sum for each word after it,
			// and each word's own weighted sum.
			s2 += s1<<6 + (before*ones>>48)<<3 + even*evenWeights>>48 + odd*oddWeights>>48
			s1 += sum * ones >> 48
		}
		for _, c := range q {
			s1 += uint64(c)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	a.s1, a.s2 = s1, s2
}

// sum is the checksum as zlib writes it.
func (a *adler) sum() uint32 { return uint32(a.s2<<16 | a.s1) }
