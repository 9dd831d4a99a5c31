package draw

import (
	"image"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// TestCoverTextIsDrawString: coverText puts on a mask, byte for byte, what
// font.Drawer's DrawString does with an opaque source: texts with accents,
// kerned pairs, runes the font lacks, over a mask already partly covered,
// clipped at its edges, at several sizes and sub-pixel positions.
func TestCoverTextIsDrawString(t *testing.T) {
	t.Parallel()
	texts := []string{"dog 0.91", "AVATAR To Wa", "Éé ÅÇÿ gj", "漢字 \u0378 x", "", "person 1.00 / bicycle 0.25"}
	for _, size := range []float64{9, 12, 31.5, 64} {
		f, err := face(size)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			for _, dot := range []fixed.Point26_6{{X: 2 << 6, Y: 40 << 6}, {X: -300, Y: 1000}, {X: 17<<6 + 21, Y: 3<<6 + 40}} {
				rect := image.Rect(-3, -5, 180, 60)
				want, got := image.NewAlpha(rect), image.NewAlpha(rect)
				for i := range want.Pix {
					want.Pix[i] = uint8(i * 7)
				}
				copy(got.Pix, want.Pix)
				d := font.Drawer{Dst: want, Src: image.Opaque, Face: f, Dot: dot}
				d.DrawString(text)
				coverText(got, f, dot, text)
				for i := range want.Pix {
					if got.Pix[i] != want.Pix[i] {
						x, y := rect.Min.X+i%rect.Dx(), rect.Min.Y+i/rect.Dx()
						t.Fatalf("size %g, %q at %v: (%d, %d) is %d, DrawString %d", size, text, dot, x, y, got.Pix[i], want.Pix[i])
					}
				}
			}
		}
	}
}
