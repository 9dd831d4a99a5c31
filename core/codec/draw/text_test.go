package draw

import (
	"image"
	"image/color"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// TestCoverTextIsDrawString: coverText puts on a mask, byte for byte, what
// font.Drawer's DrawString does with an opaque source: texts with accents,
// kerned pairs, runes the font lacks, over a mask already partly covered,
// clipped at its edges, at several sizes and sub-pixel positions; the
// canvas's face (glyphFace) against the font's own.
func TestCoverTextIsDrawString(t *testing.T) {
	t.Parallel()
	texts := []string{"dog 0.91", "AVATAR To Wa", "Éé ÅÇÿ gj", "漢字 \u0378 x", "", "person 1.00 / bicycle 0.25"}
	for _, size := range []float64{9, 12, 31.5, 64} {
		f, own := faces(t, size)
		for _, text := range texts {
			for _, dot := range []fixed.Point26_6{{X: 2 << 6, Y: 40 << 6}, {X: -300, Y: 1000}, {X: 17<<6 + 21, Y: 3<<6 + 40}} {
				rect := image.Rect(-3, -5, 180, 60)
				want, got := image.NewAlpha(rect), image.NewAlpha(rect)
				for i := range want.Pix {
					want.Pix[i] = uint8(i * 7)
				}
				copy(got.Pix, want.Pix)
				d := font.Drawer{Dst: want, Src: image.Opaque, Face: own, Dot: dot}
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

// grayGlyphs is a face whose glyph masks are *image.Gray, not the
// *image.Alpha coverOver composes itself: the masks image/draw handles.
type grayGlyphs struct{ font.Face }

func (g grayGlyphs) Glyph(dot fixed.Point26_6, r rune) (image.Rectangle, image.Image, image.Point, fixed.Int26_6, bool) {
	dr, m, mp, adv, ok := g.Face.Glyph(dot, r)
	a, isAlpha := m.(*image.Alpha)
	if !isAlpha {
		return dr, m, mp, adv, ok
	}
	gray := image.NewGray(a.Rect)
	copy(gray.Pix, a.Pix)
	return dr, gray, mp, adv, ok
}

// TestCoverTextOtherMasks: a face whose masks are not *image.Alpha draws
// what DrawString draws too, through image/draw.
func TestCoverTextOtherMasks(t *testing.T) {
	t.Parallel()
	f, err := face(24)
	if err != nil {
		t.Fatal(err)
	}
	g := grayGlyphs{f}
	rect := image.Rect(0, 0, 120, 40)
	want, got := image.NewAlpha(rect), image.NewAlpha(rect)
	dot := fixed.P(3, 30)
	(&font.Drawer{Dst: want, Src: image.Opaque, Face: g, Dot: dot}).DrawString("Wave 0.97")
	coverText(got, g, dot, "Wave 0.97")
	if string(got.Pix) != string(want.Pix) {
		t.Error("coverText with gray masks differs from DrawString")
	}
	if string(got.Pix) == string(image.NewAlpha(rect).Pix) {
		t.Error("nothing drawn")
	}
}

// TestGlyphFace: text drawn with a glyphFace is, pixel for pixel, the
// text drawn with the font's own face, on an RGBA picture in colour, at
// whole-pixel dots (its masks kept and reused, the same glyph at many
// places) and between pixels (the font's own), at several sizes.
func TestGlyphFace(t *testing.T) {
	t.Parallel()
	texts := []string{"dog 0.91 dog 0.19", "AVATAR To Wa", "Éé ÅÇÿ gj", "漢字 \u0378 x", " ", "person 1.00"}
	dots := []fixed.Point26_6{fixed.P(0, 0), fixed.P(3, 40), fixed.P(-7, 13), fixed.P(150, 70), {X: 11<<6 + 13, Y: 30 << 6}, {X: 5 << 6, Y: 20<<6 + 50}}
	for _, size := range []float64{7, 12, 33, 64} {
		cached, own := faces(t, size)
		rect := image.Rect(-4, -9, 220, 90)
		want, got := image.NewRGBA(rect), image.NewRGBA(rect)
		for i := range want.Pix {
			want.Pix[i] = uint8(i * 13)
		}
		copy(got.Pix, want.Pix)
		src := image.NewUniform(color.RGBA{R: 200, G: 30, B: 90, A: 255})
		for _, text := range texts {
			for _, dot := range dots {
				(&font.Drawer{Dst: want, Src: src, Face: own, Dot: dot}).DrawString(text)
				(&font.Drawer{Dst: got, Src: src, Face: cached, Dot: dot}).DrawString(text)
				for i := range want.Pix {
					if got.Pix[i] != want.Pix[i] {
						x, y := rect.Min.X+i/4%rect.Dx(), rect.Min.Y+i/4/rect.Dx()
						t.Fatalf("size %g, %q at %v: (%d, %d) differs from the font's own face", size, text, dot, x, y)
					}
				}
			}
		}
		if n := len(cached.(*glyphFace).glyphs); n < 20 {
			t.Errorf("size %g: %d glyphs kept, want every drawable rune of the texts", size, n)
		}
	}
}

// faces is the canvas's face (glyphFace) and the font's own at size.
func faces(t *testing.T, size float64) (cached, own font.Face) {
	t.Helper()
	cached, err := face(size)
	if err != nil {
		t.Fatal(err)
	}
	own, err = fontFace(size)
	if err != nil {
		t.Fatal(err)
	}
	return cached, own
}

// countGlyphs counts the calls of its face's Glyph.
type countGlyphs struct {
	font.Face
	calls int
}

func (c *countGlyphs) Glyph(dot fixed.Point26_6, r rune) (image.Rectangle, image.Image, image.Point, fixed.Int26_6, bool) {
	c.calls++
	return c.Face.Glyph(dot, r)
}

// TestGlyphFaceUncached: a rune whose mask the cache does not keep (here
// every rune: masks that are not *image.Alpha) is drawn by the face once
// a call, as the face would draw it, not once more to look at it.
func TestGlyphFaceUncached(t *testing.T) {
	t.Parallel()
	_, own := faces(t, 20)
	inner := &countGlyphs{Face: grayGlyphs{own}}
	g := newGlyphFace(inner)
	rect := image.Rect(0, 0, 120, 40)
	want, got := image.NewAlpha(rect), image.NewAlpha(rect)
	(&font.Drawer{Dst: want, Src: image.Opaque, Face: grayGlyphs{own}, Dot: fixed.P(2, 30)}).DrawString("aaaa")
	(&font.Drawer{Dst: got, Src: image.Opaque, Face: g, Dot: fixed.P(2, 30)}).DrawString("aaaa")
	if string(got.Pix) != string(want.Pix) {
		t.Error("drawn through glyphFace: differs from the face's own drawing")
	}
	// One look at the origin, then one call for each of the four.
	if inner.calls != 5 {
		t.Errorf("the face drew %d glyphs for 4 runes, want 5", inner.calls)
	}
}
