package image

import (
	"image"
	"image/color"

	"github.com/svc-dev/svc/core/tensor"
)

// pixels is a packed 8-bit image: c channels (1 grey, 3 RGB) per pixel,
// rows of w*c bytes.
type pixels struct {
	w, h, c int
	pix     []uint8
}

func newPixels(w, h, c int) pixels {
	return pixels{w: w, h: h, c: c, pix: tensor.MakeSlice[uint8](w * h * c)[:w*h*c]}
}

func (p pixels) free() { tensor.PutSlice(p.pix) }

// OpenCV's BGR2GRAY for 8 bits: 14-bit fixed point, rounded.
const (
	grayR = 4899
	grayG = 9617
	grayB = 1868
)

func grey(r, g, b uint8) uint8 {
	return uint8((uint32(r)*grayR + uint32(g)*grayG + uint32(b)*grayB + 1<<13) >> 14)
}

// toPacked converts a decoded image into c channels (1 or 3) the way
// OpenCV's IMREAD_COLOR (then BGR2GRAY for grey) sees it: alpha dropped,
// 16 bits cut to their high byte, CMYK by OpenCV's rule, JPEG chroma with
// libjpeg's fancy upsampling and colour tables (WebP's YUV: libwebp's
// limited-range BT.601). Of a YCbCr picture (JPEG, WebP lossy) only the
// columns cols of the rows rows are converted (nil: all; the resize's
// reads); the other formats are cheap to convert whole.
func toPacked(img image.Image, c int, webp bool, cols, rows []int32) pixels {
	b := img.Bounds()
	p := newPixels(b.Dx(), b.Dy(), c)
	if b.Min != (image.Point{}) {
		// Decoders start at the origin; anything else takes the slow road.
		genericToPacked(img, p)
		return p
	}
	switch m := img.(type) {
	case *image.YCbCr:
		ycbcrToPacked(m, p, webp, cols, rows)
	case *image.NYCbCrA:
		ycbcrToPacked(&m.YCbCr, p, webp, cols, rows)
	case *image.Gray:
		rowsOf(p, m.Pix, m.Stride, 1, func(dst, src []uint8) {
			if c == 1 {
				copy(dst, src)
				return
			}
			for x, v := range src {
				dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
			}
		})
	case *image.Gray16:
		rowsOf(p, m.Pix, m.Stride, 2, func(dst, src []uint8) {
			for x := 0; x < p.w; x++ {
				v := src[2*x]
				if c == 1 {
					dst[x] = v
				} else {
					dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
				}
			}
		})
	case *image.NRGBA:
		rowsOf(p, m.Pix, m.Stride, 4, func(dst, src []uint8) { rgbStep(dst, src, 4, 1, c) })
	case *image.RGBA:
		rgbaToPacked(m, p)
	case *image.NRGBA64:
		rowsOf(p, m.Pix, m.Stride, 8, func(dst, src []uint8) { rgbStep(dst, src, 8, 2, c) })
	case *image.RGBA64:
		rowsOf(p, m.Pix, m.Stride, 8, func(dst, src []uint8) { rgbStep(dst, src, 8, 2, c) })
	case *image.CMYK:
		rowsOf(p, m.Pix, m.Stride, 4, func(dst, src []uint8) { cmykRow(dst, src, c) })
	case *image.Paletted:
		palettedToPacked(m, p)
	default:
		genericToPacked(img, p)
	}
	return p
}

// rowsOf calls row for each row of p with the matching source row of a
// Pix slice (bpp bytes per pixel, image origin at Pix[0]).
func rowsOf(p pixels, pix []uint8, stride, bpp int, row func(dst, src []uint8)) {
	for y := 0; y < p.h; y++ {
		row(p.pix[y*p.w*p.c:(y+1)*p.w*p.c], pix[y*stride:y*stride+p.w*bpp])
	}
}

// rgbStep packs R, G, B taken every bpp bytes (their first byte of size
// bytes each: the high byte of 16-bit samples).
func rgbStep(dst, src []uint8, bpp, size, c int) {
	w := len(src) / bpp
	if c == 3 {
		for x := 0; x < w; x++ {
			s := src[x*bpp : x*bpp+3*size]
			d := dst[3*x : 3*x+3]
			d[0], d[1], d[2] = s[0], s[size], s[2*size]
		}
		return
	}
	for x := 0; x < w; x++ {
		s := src[x*bpp : x*bpp+3*size]
		dst[x] = grey(s[0], s[size], s[2*size])
	}
}

func put(p pixels, i int, r, g, b uint8) {
	if p.c == 1 {
		p.pix[i] = grey(r, g, b)
		return
	}
	p.pix[3*i], p.pix[3*i+1], p.pix[3*i+2] = r, g, b
}

// rgbaToPacked un-premultiplies (only a decoder of translucent pixels
// premultiplies them; opaque ones are as they are).
func rgbaToPacked(m *image.RGBA, p pixels) {
	for y := 0; y < p.h; y++ {
		src := m.Pix[y*m.Stride : y*m.Stride+4*p.w]
		for x := 0; x < p.w; x++ {
			s := src[4*x : 4*x+4]
			r, g, b, a := s[0], s[1], s[2], s[3]
			if a != 255 && a != 0 {
				r = uint8(min(255, (uint32(r)*255+uint32(a)/2)/uint32(a)))
				g = uint8(min(255, (uint32(g)*255+uint32(a)/2)/uint32(a)))
				b = uint8(min(255, (uint32(b)*255+uint32(a)/2)/uint32(a)))
			}
			put(p, y*p.w+x, r, g, b)
		}
	}
}

// cmykRow applies OpenCV's icvCvt_CMYK2BGR to the samples as stored in an
// Adobe JPEG (inverted: Go's decoder gives them back un-inverted).
func cmykRow(dst, src []uint8, c int) {
	for x := 0; x < len(src)/4; x++ {
		s := src[4*x : 4*x+4]
		k := 255 - int(s[3])
		conv := func(v uint8) uint8 { return uint8(k - ((int(v) * k) >> 8)) }
		r, g, b := conv(s[0]), conv(s[1]), conv(s[2])
		if c == 1 {
			dst[x] = grey(r, g, b)
		} else {
			dst[3*x], dst[3*x+1], dst[3*x+2] = r, g, b
		}
	}
}

// rawRGB is a colour's stored R, G, B, alpha ignored (not composited).
func rawRGB(c color.Color) (uint8, uint8, uint8) {
	switch v := c.(type) {
	case color.NRGBA:
		return v.R, v.G, v.B
	case color.RGBA:
		if v.A == 255 || v.A == 0 {
			return v.R, v.G, v.B
		}
	case color.Gray:
		return v.Y, v.Y, v.Y
	}
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return n.R, n.G, n.B
}

func palettedToPacked(m *image.Paletted, p pixels) {
	var lut [256][3]uint8
	for i := range lut {
		if i < len(m.Palette) {
			r, g, b := rawRGB(m.Palette[i])
			lut[i] = [3]uint8{r, g, b}
		}
	}
	for y := 0; y < p.h; y++ {
		src := m.Pix[y*m.Stride : y*m.Stride+p.w]
		for x, v := range src {
			e := lut[v]
			put(p, y*p.w+x, e[0], e[1], e[2])
		}
	}
}

func genericToPacked(img image.Image, p pixels) {
	b := img.Bounds()
	for y := 0; y < p.h; y++ {
		for x := 0; x < p.w; x++ {
			r, g, bb := rawRGB(img.At(b.Min.X+x, b.Min.Y+y))
			put(p, y*p.w+x, r, g, bb)
		}
	}
}
