package draw_test

import (
	"bytes"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/svc-dev/svc/core/codec/draw"
)

var (
	white = color.RGBA{255, 255, 255, 255}
	red   = color.RGBA{255, 0, 0, 255}
)

// blank is a w×h white canvas.
func blank(t *testing.T, w, h int) *draw.Canvas {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	stddraw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, stddraw.Src)
	c, err := draw.New(img)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestShapes draws each shape on a white canvas and reads back the pixels
// it must have painted, and those it must have left alone.
func TestShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		paint func(c *draw.Canvas)
		// want are pixels and their colours; tol how far a channel may be
		// (anti-aliasing, blending).
		want map[image.Point]color.RGBA
		tol  int
	}{
		{"box: a 2-pixel outline inside its corners", func(c *draw.Canvas) { c.Box(10, 10, 50, 40, red) }, map[image.Point]color.RGBA{
			{30, 10}: red, {30, 11}: red, {30, 12}: white, {30, 25}: white, {10, 25}: red, {49, 25}: red, {50, 25}: white, {30, 39}: red, {30, 40}: white, {30, 9}: white,
		}, 0},
		{"box past the picture is clipped", func(c *draw.Canvas) { c.Box(-20, -20, 300, 300, red) }, map[image.Point]color.RGBA{{50, 40}: white}, 0},
		{"translucent polygon blends", func(c *draw.Canvas) {
			c.Polygon([][2]float64{{20, 20}, {80, 20}, {80, 60}, {20, 60}}, color.RGBA{255, 0, 0, 128}, false)
		}, map[image.Point]color.RGBA{{50, 40}: {255, 127, 127, 255}, {10, 10}: white}, 2},
		{"polygon outlined", func(c *draw.Canvas) {
			c.Polygon([][2]float64{{20, 20}, {80, 20}, {80, 60}, {20, 60}}, color.RGBA{255, 0, 0, 128}, true)
		}, map[image.Point]color.RGBA{{50, 20}: {255, 63, 63, 255}, {50, 40}: {255, 127, 127, 255}}, 10},
		{"dot", func(c *draw.Canvas) { c.Dot(50, 40, 5, red) }, map[image.Point]color.RGBA{{50, 40}: red, {58, 40}: white}, 0},
		{"line", func(c *draw.Canvas) { c.Line(10, 40.5, 90, 40.5, 3, red) }, map[image.Point]color.RGBA{{50, 40}: red, {50, 45}: white}, 0},
		{"outline: edges 2 pixels wide centred on a tilted quadrilateral, nothing inside", func(c *draw.Canvas) {
			c.Outline([][2]float64{{20, 20}, {80, 24}, {80, 60}, {20, 56}}, color.RGBA{255, 0, 0, 40})
		}, map[image.Point]color.RGBA{{20, 38}: red, {19, 38}: red, {80, 42}: red, {50, 40}: white, {50, 30}: white, {22, 38}: white, {20, 20}: red}, 0},
		{"label: a band of its colour above the point", func(c *draw.Canvas) { c.Label(10, 40, "dog 0.91", red) }, map[image.Point]color.RGBA{
			{11, 38}: red, {11, 41}: white,
		}, 0},
		{"label at the top goes below the point", func(c *draw.Canvas) { c.Label(10, 0, "dog", red) }, map[image.Point]color.RGBA{{11, 1}: red}, 0},
		{"caption: a dark band at the top-left", func(c *draw.Canvas) { c.Caption([]string{"cls: 180 0.99", "Ωλ тест"}) }, map[image.Point]color.RGBA{
			{1, 1}: {24, 24, 24, 255}, {99, 79}: white,
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := blank(t, 100, 80)
			tt.paint(c)
			for p, want := range tt.want {
				got := c.Image().RGBAAt(p.X, p.Y)
				if !near(got, want, tt.tol) {
					t.Errorf("pixel %v is %v, want %v", p, got, want)
				}
			}
		})
	}
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// TestLabelText: a label's text is drawn in the colour that reads on its
// band: white on a dark one, black on a light one.
func TestLabelText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		bg, text color.RGBA
	}{{color.RGBA{20, 20, 120, 255}, white}, {color.RGBA{255, 230, 100, 255}, color.RGBA{0, 0, 0, 255}}} {
		c := blank(t, 200, 60)
		c.Label(0, 50, "WWW", tt.bg)
		found := false
		for y := range 50 {
			for x := range 60 {
				if c.Image().RGBAAt(x, y) == tt.text {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("no pixel of %v on a band of %v", tt.text, tt.bg)
		}
	}
}

// TestSizes: lines and text grow with the picture as Ultralytics sizes
// them.
func TestSizes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		w, h        int
		width, text float64
	}{{100, 80, 2, 12}, {1280, 720, 3, 35}, {4000, 3000, 11, 123}} {
		c, err := draw.New(image.NewRGBA(image.Rect(0, 0, tt.w, tt.h)))
		if err != nil {
			t.Fatal(err)
		}
		if c.Width != tt.width || c.Text != tt.text {
			t.Errorf("%dx%d: width %v, text %v; want %v, %v", tt.w, tt.h, c.Width, c.Text, tt.width, tt.text)
		}
	}
}

// TestSetTextSize: a label's band follows the text size set, whatever the
// picture's size.
func TestSetTextSize(t *testing.T) {
	t.Parallel()
	band := func(size float64) int {
		c := blank(t, 400, 300)
		if size > 0 {
			if err := c.SetTextSize(size); err != nil {
				t.Fatal(err)
			}
		}
		c.Label(10, 200, "Total", red)
		n := 0
		for y := 0; y < 200; y++ {
			if c.Image().RGBAAt(10, y) == red {
				n++
			}
		}
		return n
	}
	picture, small, large := band(0), band(10), band(40)
	if !(small < picture && picture < large) || small < 10 || large < 40 {
		t.Errorf("bands %d (size 10), %d (the picture's, 12), %d (size 40) pixels high", small, picture, large)
	}
}

// TestEncode: the picture comes back as PNG, losslessly, or as JPEG, at
// its size.
func TestEncode(t *testing.T) {
	t.Parallel()
	c := blank(t, 101, 37)
	c.Box(5, 5, 60, 30, red)
	for _, mediaType := range []string{draw.PNG, draw.JPEG} {
		var b bytes.Buffer
		if err := c.Encode(&b, mediaType); err != nil {
			t.Fatal(err)
		}
		var img image.Image
		var err error
		if mediaType == draw.PNG {
			img, err = png.Decode(&b)
		} else {
			img, err = jpeg.Decode(&b)
		}
		if err != nil || img.Bounds().Dx() != 101 || img.Bounds().Dy() != 37 {
			t.Fatalf("%s: %v %v", mediaType, img, err)
		}
		if got := color.RGBAModel.Convert(img.At(30, 5)).(color.RGBA); mediaType == draw.PNG && got != red {
			t.Errorf("PNG pixel %v, want %v", got, red)
		}
	}
}

// TestEncodePNG: a drawing comes back from PNG pixel for pixel, opaque
// ones as RGB (of any size, in as many chunks as their pixels need), one
// with translucent pixels with its alpha.
func TestEncodePNG(t *testing.T) {
	t.Parallel()
	noise := func(w, h int, alpha bool) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		rng := rand.New(rand.NewPCG(7, 8))
		for i := 0; i < len(img.Pix); i += 4 {
			for k := range 3 {
				img.Pix[i+k] = uint8(rng.IntN(256))
			}
			img.Pix[i+3] = 255
			if alpha && rng.IntN(2) == 0 {
				// Transparent (premultiplied: no colour), so that PNG's
				// straight alpha gives back the same pixels.
				clear(img.Pix[i : i+4])
			}
		}
		return img
	}
	tests := []struct {
		name  string
		img   *image.RGBA
		model color.Model
	}{
		{"one pixel", noise(1, 1, false), color.RGBAModel},
		{"noise over several chunks", noise(301, 233, false), color.RGBAModel},
		{"a drawing", blank(t, 97, 41).Image(), color.RGBAModel},
		{"translucent pixels", noise(33, 17, true), color.NRGBAModel},
		{"a sub-image", noise(50, 40, false).SubImage(image.Rect(3, 4, 45, 37)).(*image.RGBA), color.RGBAModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := draw.New(tt.img)
			if err != nil {
				t.Fatal(err)
			}
			c.Box(0, 0, 20, 10, red)
			var b bytes.Buffer
			if err := c.Encode(&b, draw.PNG); err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			b0 := tt.img.Bounds().Min
			if got.Bounds() != tt.img.Bounds().Sub(b0) || got.ColorModel() != tt.model {
				t.Fatalf("decoded %v in %T, want %v", got.Bounds(), got, tt.img.Bounds())
			}
			for y := range tt.img.Bounds().Dy() {
				for x := range tt.img.Bounds().Dx() {
					if g, w := color.RGBAModel.Convert(got.At(x, y)), tt.img.RGBAAt(b0.X+x, b0.Y+y); g != w {
						t.Fatalf("pixel (%d, %d) is %v, drawn %v", x, y, g, w)
					}
				}
			}
		})
	}
}

// TestCanvasOpaque: a canvas says whether its picture is opaque, found
// when it is made, and every shape (translucent ones, text, shapes past
// the edges) keeps an opaque picture opaque: a PNG answer takes the flag
// as it is, without looking at the pixels again.
func TestCanvasOpaque(t *testing.T) {
	t.Parallel()
	opaque := blank(t, 260, 130)
	paintAll(opaque)
	if !opaque.Opaque() || !draw.Opaque(opaque.Image()) {
		t.Errorf("an opaque picture drawn on: canvas says opaque %v, its pixels %v", opaque.Opaque(), draw.Opaque(opaque.Image()))
	}
	m := image.NewRGBA(image.Rect(0, 0, 260, 130))
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	m.Pix[4*(130*260)-1] = 0
	c, err := draw.New(m)
	if err != nil {
		t.Fatal(err)
	}
	if c.Opaque() {
		t.Error("a picture with a transparent pixel: canvas says opaque")
	}
	// NewOpaque takes its caller's word: the same picture is answered as
	// RGB (colour type 2), its alphas never looked at.
	known, err := draw.NewOpaque(m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := known.Encode(&b, draw.PNG); err != nil {
		t.Fatal(err)
	}
	if !known.Opaque() || b.Bytes()[25] != 2 {
		t.Errorf("NewOpaque: canvas says opaque %v, PNG colour type %d, want RGB (2)", known.Opaque(), b.Bytes()[25])
	}
	m2, toRGBA := ycbcrPicture(64, 48, image.YCbCrSubsampleRatio420, 3)
	over, err := draw.Over(m2, toRGBA)
	if err != nil {
		t.Fatal(err)
	}
	paintAll(over)
	if !over.Opaque() || !draw.Opaque(over.Image()) {
		t.Error("a canvas over YCbCr planes: not opaque")
	}
}

// ycbcrPicture is a w×h YCbCr picture of the ratio, of smooth gradients
// with noise, and a function converting it into RGBA.
func ycbcrPicture(w, h int, ratio image.YCbCrSubsampleRatio, seed uint64) (*image.YCbCr, func() *image.RGBA) {
	m := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
	rng := rand.New(rand.NewPCG(seed, 2))
	for y := range h {
		for x := range w {
			m.Y[m.YOffset(x, y)] = uint8(40 + x*170/w + rng.IntN(12))
			c := m.COffset(x, y)
			m.Cb[c], m.Cr[c] = uint8(90+y*80/h+rng.IntN(8)), uint8(200-x*90/w)
		}
	}
	return m, func() *image.RGBA {
		dst := image.NewRGBA(m.Rect)
		stddraw.Draw(dst, m.Rect, m, image.Point{}, stddraw.Src)
		return dst
	}
}

// paintAll draws every kind of shape, some past the picture's edges.
func paintAll(c *draw.Canvas) {
	c.Box(3, 5, 60, 40, red)
	c.Box(-10, 30, 250, 90, draw.Color(3))
	c.Label(3, 5, "dog 0.91 Éé", red)
	c.Label(50, 70, "ÅÇÿ gj", draw.Color(7))
	c.Polygon([][2]float64{{20, 50}, {90, 60}, {70, 95}, {18, 90}}, color.RGBA{0, 200, 80, 128}, true)
	c.Outline([][2]float64{{100, 10}, {150, 14}, {148, 40}, {99, 36}}, draw.Color(11))
	c.Line(0, 0, 200, 120, 3, draw.Color(5))
	c.Dot(120, 80, 6, draw.PoseColor(2))
	c.Caption([]string{"cls 0.99", "a second line"})
}

// TestOver: a canvas over a YCbCr picture draws what a canvas over the
// picture converted to RGBA draws, for every chroma subsampling no
// coarser than 4:2:0 and any size: with full chroma the same picture
// within rounding (45 dB), and a JPEG as close to the RGBA drawing as
// that drawing's own JPEG (within 0.2 dB); where nothing is drawn, the
// planes' JPEG is at least as close to the picture. Its PNG, and Image,
// are the planes drawn on, converted whole.
func TestOver(t *testing.T) {
	t.Parallel()
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio444,
		image.YCbCrSubsampleRatio440,
	}
	for _, ratio := range ratios {
		for _, size := range []image.Point{{403, 301}, {160, 96}, {9, 5}} {
			_, toRGBA := ycbcrPicture(size.X, size.Y, ratio, uint64(size.X))
			want, err := draw.New(toRGBA())
			if err != nil {
				t.Fatal(err)
			}
			paintAll(want)
			var wantJPEG, gotJPEG, gotPNG bytes.Buffer
			if err := want.Encode(&wantJPEG, draw.JPEG); err != nil {
				t.Fatal(err)
			}
			planes, planesRGBA := ycbcrPicture(size.X, size.Y, ratio, uint64(size.X))
			c, err := draw.Over(planes, planesRGBA)
			if err != nil {
				t.Fatal(err)
			}
			paintAll(c)
			if err := c.Encode(&gotJPEG, draw.JPEG); err != nil {
				t.Fatal(err)
			}
			if err := c.Encode(&gotPNG, draw.PNG); err != nil {
				t.Fatal(err)
			}
			got := c.Image()
			if !bytes.Equal(got.Pix, planesRGBA().Pix) {
				t.Fatalf("%v %v: Image is not the planes drawn on, converted", ratio, size)
			}
			if p := psnr(t, got, decode(t, png.Decode, &gotPNG)); !math.IsInf(p, 1) {
				t.Errorf("%v %v: the PNG is not the planes drawn on (PSNR %.1f dB)", ratio, size, p)
			}
			g, w := psnr(t, want.Image(), decode(t, jpeg.Decode, &gotJPEG)), psnr(t, want.Image(), decode(t, jpeg.Decode, &wantJPEG))
			if g < w-0.2 {
				t.Errorf("%v %v: JPEG of the planes %.2f dB from the RGBA drawing, the RGBA drawing's own JPEG %.2f dB", ratio, size, g, w)
			}
			if p := psnr(t, want.Image(), got); ratio == image.YCbCrSubsampleRatio444 && p < 45 {
				t.Errorf("%v %v: the drawing on full planes is %.2f dB from the RGBA drawing", ratio, size, p)
			}
			// Where nothing is drawn, past (256, 144), the planes are the
			// picture's.
			if clear := (image.Rectangle{Min: image.Pt(256, 144), Max: size}); !clear.Empty() {
				sub := func(m image.Image) image.Image {
					return m.(interface {
						SubImage(image.Rectangle) image.Image
					}).SubImage(clear)
				}
				g, w := psnr(t, sub(want.Image()).(*image.RGBA), sub(decode(t, jpeg.Decode, &gotJPEG))), psnr(t, sub(want.Image()).(*image.RGBA), sub(decode(t, jpeg.Decode, &wantJPEG)))
				if g < w-0.1 || g < 35 {
					t.Errorf("%v %v: where nothing is drawn, JPEG of the planes %.2f dB from the picture, of the RGBA picture %.2f dB", ratio, size, g, w)
				}
			}
		}
	}
	if _, err := draw.Over(image.NewYCbCr(image.Rect(4, 4, 20, 20), image.YCbCrSubsampleRatio420), func() *image.RGBA { return nil }); err == nil {
		t.Error("a picture not at the origin: no error")
	}
}

// decode decodes an encoded picture or fails the test.
func decode(t *testing.T, dec func(io.Reader) (image.Image, error), b *bytes.Buffer) image.Image {
	t.Helper()
	m, err := dec(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpaque: a single translucent pixel anywhere, the last of an odd
// row included, or a sub-image's, makes a picture not opaque.
func TestOpaque(t *testing.T) {
	t.Parallel()
	for _, w := range []int{1, 2, 7, 8, 9, 17} {
		for _, at := range []image.Point{{-1, -1}, {0, 0}, {w - 1, 2}, {w / 2, 4}} {
			m := image.NewRGBA(image.Rect(0, 0, w, 5))
			for i := range m.Pix {
				m.Pix[i] = 255
			}
			if at.X >= 0 {
				m.Pix[m.PixOffset(at.X, at.Y)+3] = 254
			}
			if got, want := draw.Opaque(m), m.Opaque(); got != want {
				t.Errorf("width %d, translucent at %v: Opaque %v, want %v", w, at, got, want)
			}
		}
	}
	m := image.NewRGBA(image.Rect(0, 0, 9, 4))
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	m.Pix[m.PixOffset(8, 3)+3] = 0
	if sub := m.SubImage(image.Rect(1, 1, 8, 4)).(*image.RGBA); !draw.Opaque(sub) {
		t.Error("a sub-image beside a translucent pixel: not opaque")
	}
	if sub := m.SubImage(image.Rect(1, 1, 9, 4)).(*image.RGBA); draw.Opaque(sub) {
		t.Error("a sub-image holding a translucent pixel: opaque")
	}
}
