package draw_test

import (
	"bytes"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/svc-dev/svc/core/codec/draw"
)

// photo is a w×h picture of smooth gradients and noise, as detbench's.
func photo(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(3, 4))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(24))
			img.SetRGBA(x, y, color.RGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, uint8((x+y)*100/(w+h)) + n, 255})
		}
	}
	return img
}

// toYCbCr converts img into a 4:2:0 *image.YCbCr, as a drawing would
// have to be to reach image/jpeg's other fast path.
func toYCbCr(img *image.RGBA) *image.YCbCr {
	b := img.Bounds()
	out := image.NewYCbCr(b, image.YCbCrSubsampleRatio420)
	for y := range b.Dy() {
		row := img.Pix[y*img.Stride:]
		for x := range b.Dx() {
			yy, cb, cr := color.RGBToYCbCr(row[4*x], row[4*x+1], row[4*x+2])
			out.Y[y*out.YStride+x] = yy
			if x%2 == 0 && y%2 == 0 {
				c := (y/2)*out.CStride + x/2
				out.Cb[c], out.Cr[c] = cb, cr
			}
		}
	}
	return out
}

// BenchmarkEncode compares the encodings of a 1280×720 drawing: JPEG as
// Encode writes it, by image/jpeg fed RGBA, or converted to YCbCr first, PNG as Encode
// writes it or by image/png at its best speed.
func BenchmarkEncode(b *testing.B) {
	img := photo(1280, 720)
	c, err := draw.New(img)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		enc  func(w *bytes.Buffer) error
	}{
		{"jpeg-rgba", func(w *bytes.Buffer) error { return c.Encode(w, draw.JPEG) }},
		{"jpeg-image-jpeg", func(w *bytes.Buffer) error {
			return jpeg.Encode(w, img, &jpeg.Options{Quality: draw.JPEGQuality})
		}},
		{"jpeg-ycbcr-converted", func(w *bytes.Buffer) error {
			return jpeg.Encode(w, toYCbCr(img), &jpeg.Options{Quality: draw.JPEGQuality})
		}},
		{"png-up-bestspeed", func(w *bytes.Buffer) error { return c.Encode(w, draw.PNG) }},
		{"png-image-png-bestspeed", func(w *bytes.Buffer) error {
			return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := bc.enc(&out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len()>>10), "KiB")
		})
	}
}

// BenchmarkDrawOver draws 20 boxes with labels over a 1280×720 JPEG's
// planes and encodes the answer (over), against the same over the
// picture converted to RGBA whole (converted); and on an RGBA picture
// itself, answered as PNG (png-in-place).
func BenchmarkDrawOver(b *testing.B) {
	m := toYCbCr(photo(1280, 720))
	toRGBA := func() *image.RGBA {
		dst := image.NewRGBA(m.Rect)
		stddraw.Draw(dst, m.Rect, m, image.Point{}, stddraw.Src)
		return dst
	}
	shapes := func(c *draw.Canvas) {
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range 20 {
			x, y := rng.Float64()*1100, rng.Float64()*560
			c.Box(x, y, x+40+rng.Float64()*140, y+40+rng.Float64()*120, draw.Color(i))
			c.Label(x, y, "class 0.55", draw.Color(i))
		}
	}
	drawn := photo(1280, 720)
	for _, bc := range []struct {
		name, format string
		canvas       func() (*draw.Canvas, error)
	}{
		{"over", draw.JPEG, func() (*draw.Canvas, error) { return draw.Over(m, toRGBA) }},
		{"converted", draw.JPEG, func() (*draw.Canvas, error) { return draw.New(toRGBA()) }},
		{"png-in-place", draw.PNG, func() (*draw.Canvas, error) { return draw.New(drawn) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				c, err := bc.canvas()
				if err != nil {
					b.Fatal(err)
				}
				shapes(c)
				out.Reset()
				if err := c.Encode(&out, bc.format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
