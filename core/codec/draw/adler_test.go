package draw

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestAdler: the checksum is hash/adler32's for inputs of every length
// up to a few words and past a reduction, of zeros, of 0xFF bytes (the
// largest sums and weights) and of random bytes, whether given at once or
// in pieces of random lengths.
func TestAdler(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	fills := map[string]func(p []byte){
		"zeros": func(p []byte) { clear(p) },
		"ff": func(p []byte) {
			for i := range p {
				p[i] = 0xff
			}
		},
		"random": func(p []byte) {
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
		},
	}
	lengths := []int{adlerRun - 1, adlerRun, adlerRun + 9, 3*adlerRun + 5, 5552, 5553, 1 << 16}
	for n := range 40 {
		lengths = append(lengths, n)
	}
	for name, fill := range fills {
		for _, n := range lengths {
			p := make([]byte, n)
			fill(p)
			want := adler32.Checksum(p)
			whole := newAdler()
			whole.update(p)
			if got := whole.sum(); got != want {
				t.Fatalf("%s, %d bytes at once: %08x, hash/adler32 %08x", name, n, got, want)
			}
			pieces := newAdler()
			for rest := p; len(rest) > 0; {
				k := min(len(rest), rng.IntN(20000))
				pieces.update(rest[:k])
				rest = rest[k:]
			}
			if got := pieces.sum(); got != want {
				t.Fatalf("%s, %d bytes in pieces: %08x, hash/adler32 %08x", name, n, got, want)
			}
		}
	}
}

// BenchmarkAdler is the checksum of a drawn 1280×960 PNG's filtered rows
// (3.7 MB), against hash/adler32.
func BenchmarkAdler(b *testing.B) {
	p := make([]byte, 960*(1+3*1280))
	for i := range p {
		p[i] = byte(i * 7 / 3)
	}
	b.SetBytes(int64(len(p)))
	b.Run("adler", func(b *testing.B) {
		for b.Loop() {
			a := newAdler()
			a.update(p)
		}
	})
	b.Run("hash-adler32", func(b *testing.B) {
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}
