package draw

import (
	"image"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// glyphFace is a face that rasterises each rune once: the labels of one
// drawing repeat the same few characters (a class's name, digits), and
// rasterising a glyph's outline costs far more than composing its mask.
// A glyph drawn at a whole-pixel dot (every dot a label starts at, with
// hinting's whole-pixel advances and kerning) is the glyph drawn at the
// origin, moved by the dot, since the rasteriser sees the same sub-pixel
// bias; it is kept the first time and its mask reused. A dot between
// pixels goes to the face itself. A glyphFace belongs to one canvas, so
// what it keeps lives as long as the drawing and needs no lock.
type glyphFace struct {
	font.Face
	glyphs map[rune]*glyph
}

// glyph is a rune as the face drew it at the dot (0, 0); a nil mask marks
// a rune the face draws every time (not drawable, or its mask not an
// *image.Alpha), so that it is not drawn twice at each call.
type glyph struct {
	dr      image.Rectangle
	mask    *image.Alpha // its origin at dr.Min
	advance fixed.Int26_6
}

func newGlyphFace(f font.Face) *glyphFace {
	return &glyphFace{Face: f, glyphs: map[rune]*glyph{}}
}

// Glyph is the face's Glyph, from what is kept when the dot is on a
// whole pixel.
func (f *glyphFace) Glyph(dot fixed.Point26_6, r rune) (dr image.Rectangle, mask image.Image, maskp image.Point, advance fixed.Int26_6, ok bool) {
	if dot.X&63 != 0 || dot.Y&63 != 0 {
		return f.Face.Glyph(dot, r)
	}
	g, seen := f.glyphs[r]
	if !seen {
		dr, m, mp, adv, ok := f.Face.Glyph(fixed.Point26_6{}, r)
		a, isAlpha := m.(*image.Alpha)
		g = &glyph{}
		f.glyphs[r] = g
		if !ok || !isAlpha {
			// Not drawable, or a mask this cache does not copy: the face
			// answers, now and every time.
			return f.Face.Glyph(dot, r)
		}
		g.dr, g.advance, g.mask = dr, adv, image.NewAlpha(dr)
		for y := range dr.Dy() {
			copy(g.mask.Pix[y*g.mask.Stride:(y+1)*g.mask.Stride], a.Pix[a.PixOffset(mp.X, mp.Y+y):])
		}
	} else if g.mask == nil {
		return f.Face.Glyph(dot, r)
	}
	at := image.Pt(dot.X.Floor(), dot.Y.Floor())
	return g.dr.Add(at), g.mask, g.dr.Min, g.advance, true
}
