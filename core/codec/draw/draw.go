// Package draw draws what a model found on the picture it was found in:
// boxes with their labels, translucent polygons (masks, text regions),
// keypoints and the lines between them, and captions, in a font compiled
// into the binary (Go Medium, golang.org/x/image/font/gofont: Latin, Greek
// and Cyrillic; a character it lacks is drawn as its empty box); then the
// picture as PNG or JPEG. It is a codec: protocol-neutral, pure Go, with
// no knowledge of what a box means. Line widths and text sizes follow the
// picture's size as Ultralytics' Annotator sizes them, and colours are its
// palette, so a drawing looks like the one its users know.
//
// Only the part of the picture a shape covers is rasterised, so drawing
// costs what is drawn, not the picture's size; encoding the picture is the
// larger cost (PNG filtered with Up at zlib's best speed, JPEG at quality
// 90). A canvas over a JPEG's YCbCr planes (Over) paints its shapes into
// the planes and encodes its JPEG straight from them.
package draw

import (
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"io"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomedium"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// palette is Ultralytics' 20 colours, by class index.
var palette = func() []color.RGBA {
	hex := []uint32{0xFF3838, 0xFF9D97, 0xFF701F, 0xFFB21D, 0xCFD231, 0x48F90A, 0x92CC17, 0x3DDB86, 0x1A9334, 0x00D4BB,
		0x2C99A8, 0x00C2FF, 0x344593, 0x6473FF, 0x0018EC, 0x8438FF, 0x520085, 0xCB38FF, 0xFF95C8, 0xFF37C7}
	out := make([]color.RGBA, len(hex))
	for i, h := range hex {
		out[i] = color.RGBA{R: uint8(h >> 16), G: uint8(h >> 8), B: uint8(h), A: 255}
	}
	return out
}()

// Color is the palette's colour for index i (a class).
func Color(i int) color.RGBA {
	n := len(palette)
	return palette[((i%n)+n)%n]
}

// Pose's colours: Ultralytics' pose palette, for keypoints and limbs.
var posePalette = []color.RGBA{
	{255, 128, 0, 255}, {255, 153, 51, 255}, {255, 178, 102, 255}, {230, 230, 0, 255}, {255, 153, 255, 255},
	{153, 204, 255, 255}, {255, 102, 255, 255}, {255, 51, 255, 255}, {102, 178, 255, 255}, {51, 153, 255, 255},
	{255, 153, 153, 255}, {255, 102, 102, 255}, {255, 51, 51, 255}, {153, 255, 153, 255}, {102, 255, 102, 255},
	{51, 255, 51, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 0, 0, 255}, {255, 255, 255, 255},
}

// PoseColor is the pose palette's colour i.
func PoseColor(i int) color.RGBA {
	return posePalette[((i%len(posePalette))+len(posePalette))%len(posePalette)]
}

var (
	fontOnce sync.Once
	theFont  *opentype.Font
	fontErr  error
)

// face returns a face of the compiled-in font at size pixels, which
// rasterises each glyph once (glyphFace).
func face(size float64) (font.Face, error) {
	f, err := fontFace(size)
	if err != nil {
		return nil, err
	}
	return newGlyphFace(f), nil
}

// fontFace is the compiled-in font's own face at size pixels.
func fontFace(size float64) (font.Face, error) {
	fontOnce.Do(func() { theFont, fontErr = opentype.Parse(gomedium.TTF) })
	if fontErr != nil {
		return nil, fmt.Errorf("the compiled-in font: %w", fontErr)
	}
	return opentype.NewFace(theFont, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

// Canvas is a picture being drawn on. It is not safe for concurrent use.
type Canvas struct {
	// img is the picture drawn on; nil while it is drawn on ycc.
	img *image.RGBA
	ycc *planes
	// opacity says whether every pixel of the picture has an alpha of
	// 255: unknown until asked (Opaque; a JPEG answer never asks), then
	// kept, as drawing keeps an opaque picture opaque (a shape is blended
	// over it, or painted with an opaque colour).
	opacity opacity
	// Width is the width of lines in pixels, Text the text's size.
	Width, Text float64
	face        font.Face
}

// New returns a canvas over img, with Ultralytics' sizes for its size:
// lines max(round((w + h) / 2 × 0.003), 2) pixels wide, text
// max(round((w + h) / 2 × 0.035), 12) pixels high.
func New(img *image.RGBA) (*Canvas, error) {
	c, err := sized(img.Bounds())
	if err != nil {
		return nil, err
	}
	c.img = img
	return c, nil
}

// NewOpaque is New over a picture its caller knows to be opaque (every
// alpha 255, as image/png decodes an RGB picture), whose alphas are then
// never looked at: a PNG answer is RGB without a scan of the picture.
func NewOpaque(img *image.RGBA) (*Canvas, error) {
	c, err := New(img)
	if err == nil {
		c.opacity = opaque
	}
	return c, err
}

// opacity is what a canvas knows of its picture's alphas.
type opacity uint8

const (
	opacityUnknown opacity = iota
	opaque
	translucent
)

// Opaque says whether every pixel of the canvas's picture has an alpha
// of 255 (a PNG answer is then RGB): looked at once, on the first call.
func (c *Canvas) Opaque() bool {
	if c.opacity == opacityUnknown {
		c.opacity = translucent
		if Opaque(c.Image()) {
			c.opacity = opaque
		}
	}
	return c.opacity == opaque
}

// sized is a canvas with the line width and text size of a picture of
// b's size.
func sized(b image.Rectangle) (*Canvas, error) {
	half := float64(b.Dx()+b.Dy()) / 2
	c := &Canvas{Width: math.Max(math.Round(half*0.003), 2), Text: math.Max(math.Round(half*0.035), 12)}
	f, err := face(c.Text)
	if err != nil {
		return nil, err
	}
	c.face = f
	return c, nil
}

// Over returns a canvas that draws on a decoder's YCbCr picture itself
// (its origin at zero), which it then owns: each shape is blended into
// the planes (luma per pixel, chroma per sample by the shape's mean
// cover of the sample's pixels), so that a JPEG answer is encoded
// straight from them, without converting the picture to RGB and back.
// toRGBA converts m, as it is then, into RGBA: only when the picture is
// asked for in RGBA (Image, a PNG answer).
func Over(m *image.YCbCr, toRGBA func() *image.RGBA) (*Canvas, error) {
	if m.Rect.Min != (image.Point{}) {
		return nil, fmt.Errorf("draw over a picture at %v: its origin must be at zero", m.Rect.Min)
	}
	c, err := sized(m.Rect)
	if err != nil {
		return nil, err
	}
	c.ycc, c.opacity = &planes{m: m, toRGBA: toRGBA}, opaque
	return c, nil
}

// bounds is the picture's rectangle.
func (c *Canvas) bounds() image.Rectangle {
	if c.ycc != nil {
		return c.ycc.m.Rect
	}
	return c.img.Rect
}

// SetTextSize makes the text of the labels and captions drawn from now on
// size pixels high (at least 6): a label sized to what it names, such as
// a line of text on a page, rather than to the picture.
func (c *Canvas) SetTextSize(size float64) error {
	size = math.Max(math.Round(size), 6)
	if size == c.Text {
		return nil
	}
	f, err := face(size)
	if err != nil {
		return err
	}
	c.Text, c.face = size, f
	return nil
}

// Image is the picture drawn on, in RGBA: a canvas over YCbCr planes
// converts them here and draws on the RGBA picture from then on.
func (c *Canvas) Image() *image.RGBA {
	if c.ycc != nil {
		c.img = c.ycc.toRGBA()
		c.ycc = nil
	}
	return c.img
}

// fill paints rectangle r with col, opaque or blended by its alpha
// (col is not premultiplied).
func (c *Canvas) fill(r image.Rectangle, col color.RGBA) {
	r = r.Intersect(c.bounds())
	if r.Empty() {
		return
	}
	if c.ycc != nil {
		c.ycc.blend(r, nil, col)
		return
	}
	op := stddraw.Over
	if col.A == 255 {
		op = stddraw.Src
	}
	stddraw.Draw(c.img, r, image.NewUniform(premultiply(col)), image.Point{}, op)
}

func premultiply(c color.RGBA) color.RGBA {
	a := uint32(c.A)
	return color.RGBA{R: uint8(uint32(c.R) * a / 255), G: uint8(uint32(c.G) * a / 255), B: uint8(uint32(c.B) * a / 255), A: c.A}
}

// Box draws a rectangle's outline, the line inside its corners.
func (c *Canvas) Box(x1, y1, x2, y2 float64, col color.RGBA) {
	lw := int(c.Width)
	a := image.Rect(int(math.Round(x1)), int(math.Round(y1)), int(math.Round(x2)), int(math.Round(y2))).Canon()
	c.fill(image.Rect(a.Min.X, a.Min.Y, a.Max.X, a.Min.Y+lw), col)
	c.fill(image.Rect(a.Min.X, a.Max.Y-lw, a.Max.X, a.Max.Y), col)
	c.fill(image.Rect(a.Min.X, a.Min.Y, a.Min.X+lw, a.Max.Y), col)
	c.fill(image.Rect(a.Max.X-lw, a.Min.Y, a.Max.X, a.Max.Y), col)
}

// textColor is white on a dark background, black on a light one.
func textColor(bg color.RGBA) color.RGBA {
	if 0.299*float64(bg.R)+0.587*float64(bg.G)+0.114*float64(bg.B) > 160 {
		return color.RGBA{A: 255}
	}
	return color.RGBA{R: 255, G: 255, B: 255, A: 255}
}

// Label writes text on a band of colour bg whose bottom-left corner is at
// (x, y) (a box's top-left corner), or whose top-left corner is there when
// the band would leave the picture at the top.
func (c *Canvas) Label(x, y float64, text string, bg color.RGBA) {
	m := c.face.Metrics()
	h := (m.Ascent + m.Descent).Ceil() + 2
	w := font.MeasureString(c.face, text).Ceil() + 4
	x0, y0 := int(math.Round(x)), int(math.Round(y))-h
	if y0 < 0 {
		y0 = int(math.Round(y))
	}
	x0 = min(max(x0, 0), max(c.bounds().Dx()-w, 0))
	c.fill(image.Rect(x0, y0, x0+w, y0+h), bg)
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(textColor(bg)), Face: c.face, Dot: fixed.P(x0+2, y0+1+m.Ascent.Ceil())}
	if c.ycc != nil {
		// The text's cover, drawn on a mask as large as its ink (which
		// may reach past the band: an accent, a descender), is blended
		// into the planes.
		ink, _ := d.BoundString(text)
		mask := image.NewAlpha(image.Rect(ink.Min.X.Floor(), ink.Min.Y.Floor(), ink.Max.X.Ceil(), ink.Max.Y.Ceil()))
		coverText(mask, c.face, d.Dot, text)
		c.ycc.blend(mask.Rect, mask, textColor(bg))
		return
	}
	d.DrawString(text)
}

// coverText draws text's cover on mask with its baseline's start at dot,
// as font.Drawer's DrawString does with an opaque source (the same
// kerning and advances, the same Over arithmetic), but each
// glyph's alpha composed straight into mask's bytes: image/draw has no
// fast path for an *image.Alpha destination, and goes pixel by pixel
// through colours, several times slower.
func coverText(mask *image.Alpha, face font.Face, dot fixed.Point26_6, text string) {
	prev := rune(-1)
	for _, r := range text {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		dr, gm, gp, advance, _ := face.Glyph(dot, r)
		if !dr.Empty() {
			coverOver(mask, dr, gm, gp)
		}
		dot.X += advance
		prev = r
	}
}

// coverOver composes glyph mask gm (its point gp at r.Min) over dst in r,
// with image/draw's Over arithmetic for an opaque source, in 16 bits.
func coverOver(dst *image.Alpha, r image.Rectangle, gm image.Image, gp image.Point) {
	src, ok := gm.(*image.Alpha)
	if !ok {
		stddraw.DrawMask(dst, r, image.Opaque, image.Point{}, gm, gp, stddraw.Over)
		return
	}
	clip := r.Intersect(dst.Rect).Intersect(src.Rect.Add(r.Min.Sub(gp)))
	if clip.Empty() {
		return
	}
	gp = gp.Add(clip.Min.Sub(r.Min))
	for y := range clip.Dy() {
		d := dst.Pix[dst.PixOffset(clip.Min.X, clip.Min.Y+y):][:clip.Dx()]
		s := src.Pix[src.PixOffset(gp.X, gp.Y+y):][:len(d)]
		for x, m := range s {
			ma := uint32(m) * 0x101
			out := (uint32(d[x])*0x101*(0xffff-ma) + 0xffff*ma) / 0xffff
			d[x] = uint8(out >> 8)
		}
	}
}

// Caption writes lines of text at the picture's top-left corner, each on
// a dark band: what a classifier or a text recogniser says of the whole
// picture.
func (c *Canvas) Caption(lines []string) {
	m := c.face.Metrics()
	h := (m.Ascent + m.Descent).Ceil() + 4
	for i, text := range lines {
		c.Label(0, float64(i*h), text, color.RGBA{R: 24, G: 24, B: 24, A: 255})
	}
}

// Polygon fills a closed polygon (x, y pairs in pixels) with col blended
// by its alpha, and outlines it with col, opaque, unless outline is false.
func (c *Canvas) Polygon(pts [][2]float64, col color.RGBA, outline bool) {
	if len(pts) < 2 {
		return
	}
	c.path(pts, col, true)
	if outline {
		edge := col
		edge.A = 255
		for i := range pts {
			a, b := pts[i], pts[(i+1)%len(pts)]
			c.Line(a[0], a[1], b[0], b[1], math.Max(c.Width/2, 1), edge)
		}
	}
}

// Outline draws a closed polygon's outline (x, y pairs in pixels), opaque
// in col, its lines c.Width wide and centred on the polygon's edges, its
// corners filled: a box that need not be upright.
func (c *Canvas) Outline(pts [][2]float64, col color.RGBA) {
	col.A = 255
	for i, a := range pts {
		b := pts[(i+1)%len(pts)]
		c.Line(a[0], a[1], b[0], b[1], c.Width, col)
		c.Dot(a[0], a[1], c.Width/2, col)
	}
}

// Line draws a segment of width w.
func (c *Canvas) Line(x1, y1, x2, y2, w float64, col color.RGBA) {
	dx, dy := x2-x1, y2-y1
	n := math.Hypot(dx, dy)
	if n == 0 {
		c.Dot(x1, y1, w/2, col)
		return
	}
	ox, oy := -dy/n*w/2, dx/n*w/2
	c.path([][2]float64{{x1 + ox, y1 + oy}, {x2 + ox, y2 + oy}, {x2 - ox, y2 - oy}, {x1 - ox, y1 - oy}}, col, false)
}

// Dot draws a filled circle of radius r.
func (c *Canvas) Dot(x, y, r float64, col color.RGBA) {
	const n = 16
	pts := make([][2]float64, n)
	for i := range pts {
		a := 2 * math.Pi * float64(i) / n
		pts[i] = [2]float64{x + r*math.Cos(a), y + r*math.Sin(a)}
	}
	c.path(pts, col, false)
}

// path fills a polygon, rasterising only its bounding box, anti-aliased;
// col blended by its alpha (translucent) or painted.
func (c *Canvas) path(pts [][2]float64, col color.RGBA, translucent bool) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range pts {
		minX, minY = math.Min(minX, p[0]), math.Min(minY, p[1])
		maxX, maxY = math.Max(maxX, p[0]), math.Max(maxY, p[1])
	}
	r := image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX))+1, int(math.Ceil(maxY))+1).Intersect(c.bounds())
	if r.Empty() || math.IsNaN(minX+minY+maxX+maxY) {
		return
	}
	z := vector.NewRasterizer(r.Dx(), r.Dy())
	ox, oy := float32(r.Min.X), float32(r.Min.Y)
	z.MoveTo(float32(pts[0][0])-ox, float32(pts[0][1])-oy)
	for _, p := range pts[1:] {
		z.LineTo(float32(p[0])-ox, float32(p[1])-oy)
	}
	z.ClosePath()
	if !translucent {
		col.A = 255
	}
	if c.ycc != nil {
		mask := image.NewAlpha(r)
		z.Draw(mask, r, image.Opaque, image.Point{})
		c.ycc.blend(r, mask, col)
		return
	}
	z.Draw(c.img, r, image.NewUniform(premultiply(col)), image.Point{})
}

// Formats the canvas encodes.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
)

// JPEGQuality is the quality a drawing is encoded at as JPEG.
const JPEGQuality = 90

// Encode writes the picture as PNG (RGB, each row filtered with Up,
// zlib's best speed: encodePNG) or baseline JPEG (4:2:0, JPEGQuality:
// encodeJPEG), by its media type.
func (c *Canvas) Encode(w io.Writer, mediaType string) error {
	if mediaType == JPEG {
		if c.ycc != nil {
			return encodeJPEG(w, nil, c.ycc.m, JPEGQuality)
		}
		return encodeJPEG(w, c.img, nil, JPEGQuality)
	}
	return encodePNG(w, c.Image(), c.Opaque())
}
