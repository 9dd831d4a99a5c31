package image

import (
	"image"
	"sync"
)

// libjpeg's YCbCr→RGB tables (jdcolor.c: 16-bit fixed point, rounded), so
// that a JPEG's colours are libjpeg-turbo's, OpenCV's decoder, and not Go's
// color.YCbCrToRGB (which rounds differently).
var jpegTables = sync.OnceValue(func() *[4][256]int32 {
	var t [4][256]int32
	fix := func(f float64) int32 { return int32(f*65536 + 0.5) }
	for i := range 256 {
		x := int32(i - 128)
		t[0][i] = (fix(1.40200)*x + 1<<15) >> 16 // Cr → R
		t[1][i] = (fix(1.77200)*x + 1<<15) >> 16 // Cb → B
		t[2][i] = -fix(0.71414) * x              // Cr → G
		t[3][i] = -fix(0.34414)*x + 1<<15        // Cb → G
	}
	return &t
})

func clamp8(v int32) uint8 {
	if uint32(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return uint8(v)
}

// webpRGB is libwebp's VP8YUVToR/G/B: limited-range BT.601, 14-bit.
func webpRGB(y, u, v int32) (uint8, uint8, uint8) {
	clip := func(x int32) uint8 {
		if x&^(256<<6-1) == 0 {
			return uint8(x >> 6)
		}
		if x < 0 {
			return 0
		}
		return 255
	}
	yy := (y * 19077) >> 8
	return clip(yy + (v*26149)>>8 - 14234),
		clip(yy - (u*6419)>>8 - (v*13320)>>8 + 8708),
		clip(yy + (u*33050)>>8 - 17685)
}

// upsampleRow writes the chroma of image row y, one sample per pixel, into
// out (len w): libjpeg's fancy (triangular) upsampling for 4:2:0 and 4:2:2,
// replication for the other ratios.
func upsampleRow(out, plane []uint8, m *image.YCbCr, y, w int) {
	cw := (w + 1) / 2
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		copy(out, plane[y*m.CStride:y*m.CStride+w])
	case image.YCbCrSubsampleRatio420:
		ch := (m.Rect.Dy() + 1) / 2
		r := y >> 1
		nr := r + 1
		if y&1 == 0 {
			nr = r - 1
		}
		nr = min(max(nr, 0), ch-1)
		r0, r1 := plane[r*m.CStride:r*m.CStride+cw], plane[nr*m.CStride:nr*m.CStride+cw]
		prev := 3*int32(r0[0]) + int32(r1[0])
		this := prev
		for j := range cw {
			next := this
			if j+1 < cw {
				next = 3*int32(r0[j+1]) + int32(r1[j+1])
			}
			out[2*j] = uint8((3*this + prev + 8) >> 4)
			if 2*j+1 < w {
				out[2*j+1] = uint8((3*this + next + 7) >> 4)
			}
			prev, this = this, next
		}
	case image.YCbCrSubsampleRatio422:
		row := plane[y*m.CStride : y*m.CStride+cw]
		for j := range cw {
			v := 3 * int32(row[j])
			out[2*j] = uint8((v + int32(row[max(j-1, 0)]) + 1) >> 2)
			if 2*j+1 < w {
				out[2*j+1] = uint8((v + int32(row[min(j+1, cw-1)]) + 2) >> 2)
			}
		}
	default:
		for x := range w {
			out[x] = plane[m.COffset(x+m.Rect.Min.X, y+m.Rect.Min.Y)-m.COffset(m.Rect.Min.X, m.Rect.Min.Y)]
		}
	}
}

// ycbcrToPacked converts m's rows listed in rows (nil: all), and of them
// the columns listed in cols (nil: all), leaving the other bytes of p as
// they were; webp selects libwebp's conversion.
func ycbcrToPacked(m *image.YCbCr, p pixels, webp bool, cols, rows []int32) {
	w := p.w
	if cols != nil && len(cols) < w {
		ycbcrCols(m, p, webp, cols, rows)
		return
	}
	buf := newPixels(w, 2, 1)
	defer buf.free()
	cb, cr := buf.pix[:w], buf.pix[w:2*w]
	for i := 0; i < p.h; i++ {
		y := i
		if rows != nil {
			if i >= len(rows) {
				break
			}
			y = int(rows[i])
		}
		upsampleRow(cb, m.Cb, m, y, w)
		upsampleRow(cr, m.Cr, m, y, w)
		yrow := m.Y[y*m.YStride : y*m.YStride+w]
		dst := p.pix[y*w*p.c : (y+1)*w*p.c]
		switch {
		case webp:
			webpRow(dst, yrow, cb, cr, p.c)
		case p.c == 1:
			jpegGreyRow(dst, yrow, cb, cr)
		default:
			jpegRow(dst, yrow, cb, cr)
		}
	}
}

// ycbcrToRGBA converts a JPEG's m (origin at zero) as ycbcrToPacked
// does, libjpeg's upsampling and jpegRow, a row at a time into a new
// opaque RGBA picture: a drawing's canvas without a whole RGB copy first.
func ycbcrToRGBA(m *image.YCbCr) *image.RGBA {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	buf := newPixels(w, 5, 1)
	defer buf.free()
	cb, cr, rgb := buf.pix[:w], buf.pix[w:2*w], buf.pix[2*w:5*w]
	for y := range h {
		upsampleRow(cb, m.Cb, m, y, w)
		upsampleRow(cr, m.Cr, m, y, w)
		jpegRow(rgb, m.Y[y*m.YStride:y*m.YStride+w], cb, cr)
		widenRow(out.Pix[y*out.Stride:y*out.Stride+4*w], rgb)
	}
	return out
}

func webpRow(dst, yrow, cb, cr []uint8, c int) {
	for x, yv := range yrow {
		r, g, b := webpRGB(int32(yv), int32(cb[x]), int32(cr[x]))
		if c == 1 {
			dst[x] = grey(r, g, b)
		} else {
			dst[3*x], dst[3*x+1], dst[3*x+2] = r, g, b
		}
	}
}

func jpegGreyRow(dst, yrow, cb, cr []uint8) {
	t := jpegTables()
	for x, yv := range yrow {
		yy := int32(yv)
		dst[x] = grey(clamp8(yy+t[0][cr[x]]), clamp8(yy+(t[3][cb[x]]+t[2][cr[x]])>>16), clamp8(yy+t[1][cb[x]]))
	}
}

func jpegRow(dst, yrow, cb, cr []uint8) {
	t := jpegTables()
	dst = dst[:3*len(yrow)]
	cb, cr = cb[:len(yrow)], cr[:len(yrow)]
	for x, yv := range yrow {
		yy := int32(yv)
		u, v := cb[x], cr[x]
		d := dst[3*x : 3*x+3 : 3*x+3]
		d[0] = clamp8(yy + t[0][v])
		d[1] = clamp8(yy + (t[3][u]+t[2][v])>>16)
		d[2] = clamp8(yy + t[1][u])
	}
}

// chromaTap is where one image column's chroma comes from in a chroma row:
// sample j weighted 3 (4:2:0, 4:2:2; alone otherwise), its neighbour nj
// weighted 1, and the rounding bias, as upsampleRow computes it.
type chromaTap struct {
	j, nj int32
	bias  int32
}

func chromaTaps(m *image.YCbCr, cols []int32) []chromaTap {
	cw := int32((m.Rect.Dx() + 1) / 2)
	even := [2]int32{8, 7} // 4:2:0's bias for even and odd columns
	if m.SubsampleRatio == image.YCbCrSubsampleRatio422 {
		even = [2]int32{1, 2}
	}
	taps := make([]chromaTap, len(cols))
	for k, x := range cols {
		switch m.SubsampleRatio {
		case image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422:
			j := x >> 1
			nj := min(j+1, cw-1)
			if x&1 == 0 {
				nj = max(j-1, 0)
			}
			taps[k] = chromaTap{j, nj, even[x&1]}
		case image.YCbCrSubsampleRatio444:
			taps[k] = chromaTap{j: x}
		default:
			o := m.COffset(int(x)+m.Rect.Min.X, m.Rect.Min.Y) - m.COffset(m.Rect.Min.X, m.Rect.Min.Y)
			taps[k] = chromaTap{j: int32(o)}
		}
	}
	return taps
}

// chromaCols is upsampleRow for the columns of taps only.
func chromaCols(out, plane []uint8, m *image.YCbCr, y int, taps []chromaTap) {
	out = out[:len(taps)]
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio420:
		ch := (m.Rect.Dy() + 1) / 2
		r := y >> 1
		nr := r + 1
		if y&1 == 0 {
			nr = r - 1
		}
		nr = min(max(nr, 0), ch-1)
		r0, r1 := plane[r*m.CStride:], plane[nr*m.CStride:]
		for k, t := range taps {
			this := 3*int32(r0[t.j]) + int32(r1[t.j])
			other := 3*int32(r0[t.nj]) + int32(r1[t.nj])
			out[k] = uint8((3*this + other + t.bias) >> 4)
		}
	case image.YCbCrSubsampleRatio422:
		row := plane[y*m.CStride:]
		for k, t := range taps {
			out[k] = uint8((3*int32(row[t.j]) + int32(row[t.nj]) + t.bias) >> 2)
		}
	case image.YCbCrSubsampleRatio444:
		row := plane[y*m.CStride:]
		for k, t := range taps {
			out[k] = row[t.j]
		}
	default:
		base := m.COffset(m.Rect.Min.X, y+m.Rect.Min.Y) - m.COffset(m.Rect.Min.X, m.Rect.Min.Y)
		for k, t := range taps {
			out[k] = plane[base+int(t.j)]
		}
	}
}

// ycbcrCols converts the pixels of m at the listed columns of the listed
// rows (nil: all) into p.
func ycbcrCols(m *image.YCbCr, p pixels, webp bool, cols, rows []int32) {
	n := len(cols)
	buf := newPixels(n, 2, 1)
	defer buf.free()
	cb, cr := buf.pix[:n], buf.pix[n:2*n]
	taps := chromaTaps(m, cols)
	t := jpegTables()
	for i := 0; i < p.h; i++ {
		y := i
		if rows != nil {
			if i >= len(rows) {
				break
			}
			y = int(rows[i])
		}
		chromaCols(cb, m.Cb, m, y, taps)
		chromaCols(cr, m.Cr, m, y, taps)
		yrow := m.Y[y*m.YStride : y*m.YStride+p.w]
		dst := p.pix[y*p.w*p.c : (y+1)*p.w*p.c]
		if !webp && p.c == 3 {
			jpegCols(dst, yrow, cb, cr, cols)
			continue
		}
		for k, x := range cols {
			yy, u, v := int32(yrow[x]), cb[k], cr[k]
			var r, g, b uint8
			if webp {
				r, g, b = webpRGB(yy, int32(u), int32(v))
			} else {
				r, g, b = clamp8(yy+t[0][v]), clamp8(yy+(t[3][u]+t[2][v])>>16), clamp8(yy+t[1][u])
			}
			if p.c == 1 {
				dst[x] = grey(r, g, b)
				continue
			}
			d := dst[3*x : 3*x+3 : 3*x+3]
			d[0], d[1], d[2] = r, g, b
		}
	}
}

// jpegCols is jpegRow at the listed columns (cb and cr: their chroma).
func jpegCols(dst, yrow, cb, cr []uint8, cols []int32) {
	t := jpegTables()
	cb, cr = cb[:len(cols)], cr[:len(cols)]
	for k, x := range cols {
		yy := int32(yrow[x])
		u, v := cb[k], cr[k]
		d := dst[3*x : 3*x+3 : 3*x+3]
		d[0] = clamp8(yy + t[0][v])
		d[1] = clamp8(yy + (t[3][u]+t[2][v])>>16)
		d[2] = clamp8(yy + t[1][u])
	}
}
