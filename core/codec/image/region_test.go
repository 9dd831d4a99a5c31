package image

import (
	"bytes"
	"image"
	"math/rand/v2"
	"testing"
)

// TestReadsCover: a resize reads nothing outside the columns and rows its
// reads lists (pack converts only those): garbage elsewhere changes nothing.
func TestReadsCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name           string
		sw, sh, dw, dh int
		win            window
	}{
		{"cover shrink", 128, 72, 40, 22, window{x0: 9, y0: 0, w: 22, h: 22}},
		{"shrink by 3.2", 64, 64, 20, 20, window{w: 20, h: 20}},
		{"fit 4000x3000-like", 200, 150, 32, 24, window{w: 32, h: 24}},
		{"enlarge", 10, 7, 33, 25, window{x0: 3, y0: 2, w: 20, h: 20}},
		{"integer area", 60, 40, 20, 10, window{x0: 2, y0: 1, w: 15, h: 8}},
		{"same size", 30, 20, 30, 20, window{x0: 4, y0: 3, w: 10, h: 10}},
		{"tall line", 9, 200, 3, 48, window{w: 3, h: 48}},
	}
	interps := []int{interNearest, interLinear, interCubic, interArea}
	for _, c := range cases {
		for _, ch := range []int{1, 3} {
			src := newPixels(c.sw, c.sh, ch)
			for i := range src.pix {
				src.pix[i] = uint8(rng.IntN(256))
			}
			for _, interp := range interps {
				r := newResizer(c.sw, c.sh, ch, c.dw, c.dh, interp, c.win)
				want := make([]uint8, c.win.w*c.win.h*ch)
				r.run(src, want)
				cols, rows := r.reads()
				keep := make([]bool, c.sw*c.sh)
				for _, y := range rows {
					for _, x := range cols {
						keep[int(y)*c.sw+int(x)] = true
					}
				}
				dirty := newPixels(c.sw, c.sh, ch)
				for i := range dirty.pix {
					dirty.pix[i] = uint8(rng.IntN(256))
					if keep[i/ch] {
						dirty.pix[i] = src.pix[i]
					}
				}
				got := make([]uint8, len(want))
				r.run(dirty, got)
				if !bytes.Equal(got, want) {
					t.Errorf("%s, %d channels, interp %d: reads %d columns, %d rows, and the resize read others", c.name, ch, interp, len(cols), len(rows))
				}
				dirty.free()
			}
			src.free()
		}
	}
}

// TestYCbCrRegion: converting listed columns of listed rows gives the same
// bytes there as converting everything, for every chroma subsampling, JPEG
// and WebP colours, grey and RGB.
func TestYCbCrRegion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	}
	for _, ratio := range ratios {
		m := image.NewYCbCr(image.Rect(0, 0, 37, 23), ratio)
		for _, plane := range [][]uint8{m.Y, m.Cb, m.Cr} {
			for i := range plane {
				plane[i] = uint8(rng.IntN(256))
			}
		}
		cols := []int32{0, 1, 2, 7, 8, 15, 16, 35, 36}
		rows := []int32{0, 1, 5, 6, 21, 22}
		for _, webp := range []bool{false, true} {
			for _, ch := range []int{1, 3} {
				full := toPacked(m, ch, webp, nil, nil)
				part := toPacked(m, ch, webp, cols, rows)
				whole := toPacked(m, ch, webp, nil, rows)
				for _, y := range rows {
					for x := range int32(full.w) {
						i := (int(y)*full.w + int(x)) * ch
						if !bytes.Equal(whole.pix[i:i+ch], full.pix[i:i+ch]) {
							t.Fatalf("%v webp=%v c=%d, whole rows, at (%d,%d): %v, want %v", ratio, webp, ch, x, y, whole.pix[i:i+ch], full.pix[i:i+ch])
						}
					}
					for _, x := range cols {
						i := (int(y)*full.w + int(x)) * ch
						if !bytes.Equal(part.pix[i:i+ch], full.pix[i:i+ch]) {
							t.Fatalf("%v webp=%v c=%d at (%d,%d): %v, want %v", ratio, webp, ch, x, y, part.pix[i:i+ch], full.pix[i:i+ch])
						}
					}
				}
				full.free()
				part.free()
				whole.free()
			}
		}
	}
}
