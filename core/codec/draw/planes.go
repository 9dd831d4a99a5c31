package draw

import (
	"image"
	"image/color"
)

// planes is a YCbCr picture a canvas draws on, its origin at zero, and
// how to convert it into RGBA.
type planes struct {
	m      *image.YCbCr
	toRGBA func() *image.RGBA
}

// footprint is how many pixels across and down share a chroma sample.
func footprint(ratio image.YCbCrSubsampleRatio) (int, int) {
	switch ratio {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}

// blend paints col (not premultiplied) over the pixels of r, each by
// col's alpha times its cover in mask (which holds r; nil: fully
// covered): as painting in RGB and converting would, since JFIF's
// conversion is linear. Luma is blended per pixel, and each chroma
// sample by the mean cover of the pixels it stands for, as a 4:2:0
// encoder averages a drawing's chroma.
func (p *planes) blend(r image.Rectangle, mask *image.Alpha, col color.RGBA) {
	m := p.m
	r = r.Intersect(m.Rect)
	if r.Empty() || col.A == 0 {
		return
	}
	yc, cbc, crc := color.RGBToYCbCr(col.R, col.G, col.B)
	a := int32(col.A)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := m.Y[y*m.YStride+r.Min.X : y*m.YStride+r.Max.X]
		switch {
		case mask == nil && a == 255:
			// Filled by doubling what is filled: copy is a memmove.
			row[0] = yc
			for n := 1; n < len(row); n *= 2 {
				copy(row[n:], row[:n])
			}
		case mask == nil:
			for x, v := range row {
				row[x] = mix(v, yc, a)
			}
		case a == 255:
			cover := mask.Pix[mask.PixOffset(r.Min.X, y):][:len(row)]
			for x, v := range row {
				if c := int32(cover[x]); c > 0 {
					row[x] = mix(v, yc, c)
				}
			}
		default:
			cover := mask.Pix[mask.PixOffset(r.Min.X, y):][:len(row)]
			for x, v := range row {
				if c := int32(cover[x]) * a / 255; c > 0 {
					row[x] = mix(v, yc, c)
				}
			}
		}
	}
	sx, sy := footprint(m.SubsampleRatio)
	cx0, cx1, cy1 := r.Min.X/sx, (r.Max.X-1)/sx, (r.Max.Y-1)/sy
	for cy := r.Min.Y / sy; cy <= cy1; cy++ {
		y0, y1 := cy*sy, min(cy*sy+sy, m.Rect.Max.Y)
		in0, in1 := max(y0, r.Min.Y), min(y1, r.Max.Y)
		for cx := cx0; cx <= cx1; cx++ {
			x0, x1 := cx*sx, min(cx*sx+sx, m.Rect.Max.X)
			ix0, ix1 := max(x0, r.Min.X), min(x1, r.Max.X)
			var sum int32
			switch {
			case mask == nil:
				sum = a * int32((ix1-ix0)*(in1-in0))
			case a == 255:
				for y := in0; y < in1; y++ {
					for _, c := range mask.Pix[mask.PixOffset(ix0, y):][:ix1-ix0] {
						sum += int32(c)
					}
				}
			default:
				for y := in0; y < in1; y++ {
					for _, c := range mask.Pix[mask.PixOffset(ix0, y):][:ix1-ix0] {
						sum += int32(c) * a / 255
					}
				}
			}
			// The mean cover, rounded: a sample of 4:2:0's 2×2 pixels
			// with a shift, any other with a division.
			var c int32
			if n := int32((x1 - x0) * (y1 - y0)); n == 4 {
				c = (sum + 2) >> 2
			} else {
				c = (sum + n/2) / n
			}
			if c > 0 {
				i := cy*m.CStride + cx // the origin at zero: COffset without its switch
				m.Cb[i], m.Cr[i] = mix(m.Cb[i], cbc, c), mix(m.Cr[i], crc, c)
			}
		}
	}
}

// mix is v moved towards to by a/255, rounded.
func mix(v, to uint8, a int32) uint8 {
	return uint8((int32(v)*(255-a) + int32(to)*a + 127) / 255)
}
