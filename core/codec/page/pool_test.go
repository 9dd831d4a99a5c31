package page

import (
	"slices"
	"testing"
)

// countingPool lends buffers and records what comes back.
type countingPool struct {
	lent, back int
	last       []uint8
}

func (p *countingPool) Get(n int) []uint8 {
	p.lent++
	p.last = make([]uint8, n)
	for i := range p.last {
		p.last[i] = 0xAB // contents that must not matter
	}
	return p.last
}

func (p *countingPool) Put([]uint8) { p.back++ }

// TestCropPooled: the pooled crop is Crop's, in the pool's storage; a
// crop turned upright gives its first buffer back.
func TestCropPooled(t *testing.T) {
	img := Image{W: 64, H: 48, C: 3, Pix: make([]uint8, 64*48*3)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	cases := []struct {
		name       string
		q          Quad
		lent, back int
	}{
		{"wide", Quad{{X: 5, Y: 10}, {X: 50, Y: 12}, {X: 49, Y: 22}, {X: 4, Y: 20}}, 1, 0},
		{"tall, turned", Quad{{X: 10, Y: 2}, {X: 20, Y: 2}, {X: 20, Y: 40}, {X: 10, Y: 40}}, 2, 1},
		{"flat", Quad{{X: 10, Y: 10}, {X: 10, Y: 10}, {X: 10, Y: 10}, {X: 10, Y: 10}}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p countingPool
			got := CropPooled(img, c.q, &p)
			want := Crop(img, c.q)
			if got.W != want.W || got.H != want.H || !slices.Equal(got.Pix, want.Pix) {
				t.Fatalf("pooled crop %d×%d differs from Crop's %d×%d", got.W, got.H, want.W, want.H)
			}
			if p.lent != c.lent || p.back != c.back {
				t.Fatalf("lent %d, given back %d; want %d, %d", p.lent, p.back, c.lent, c.back)
			}
			if c.lent > 0 && &got.Pix[0] != &p.last[0] {
				t.Fatal("the crop is not in the pool's storage")
			}
		})
	}
}
