package draw

import (
	"encoding/binary"
	"image"
	"io"
	"math"
	"math/bits"
)

// encodeJPEG writes img as a baseline JPEG, 4:2:0, at quality q (1–100,
// libjpeg's scaling of the standard tables), with the standard Huffman
// tables. It writes what image/jpeg writes for an *image.RGBA, in about a
// third of its time: image/jpeg divides every coefficient by its
// quantizer, converts colours through color.RGBToYCbCr per pixel and
// writes the entropy-coded bits a byte at a time through a bufio.Writer,
// which on a drawn 1280×720 answer costs more than the rest of the
// drawing together (BENCHMARKS.md, detection). Here the quantizers are
// folded into the scale factors of a floating-point AAN DCT (one
// multiplication per coefficient, rounded without a conversion), colours
// are converted in fixed point straight from the picture's rows (chroma
// from the sum of 2×2 pixels), the AC coefficients are coded by walking
// a mask of the non-zero ones, and bits go through a 64-bit accumulator
// four bytes at a time into a slice flushed every 64 KiB.
// Alpha is ignored, as image/jpeg ignores it.
//
// A YCbCr picture (ycc, when img is nil; its origin at zero) is read
// from its planes: luma as it is, chroma as its 4:2:0 samples or the
// mean of the samples of each 2×2 pixels.
func encodeJPEG(w io.Writer, img *image.RGBA, ycc *image.YCbCr, q int) error {
	e := &jpegWriter{w: w, out: make([]byte, 0, jpegFlush+1024)}
	e.tables(q)
	var b image.Rectangle
	if ycc != nil {
		b = ycc.Rect
	} else {
		b = img.Bounds()
	}
	e.header(b.Dx(), b.Dy())
	var m mcu
	var dc [3]int32
	for y := b.Min.Y; y < b.Max.Y; y += 16 {
		for x := b.Min.X; x < b.Max.X; x += 16 {
			if ycc != nil {
				m.planes(ycc, x, y)
			} else {
				m.load(img, x, y)
			}
			for i := range m.y {
				dc[0] = e.block(&m.y[i], &e.scale[0], dc[0], &jpegDCLuma, &jpegACLuma)
			}
			dc[1] = e.block(&m.cb, &e.scale[1], dc[1], &jpegDCChroma, &jpegACChroma)
			dc[2] = e.block(&m.cr, &e.scale[1], dc[2], &jpegDCChroma, &jpegACChroma)
			if len(e.out) >= jpegFlush && e.err == nil {
				_, e.err = e.w.Write(e.out)
				e.out = e.out[:0]
			}
		}
	}
	e.pad()
	e.out = append(e.out, 0xff, 0xd9) // EOI
	if e.err != nil {
		return e.err
	}
	_, err := e.w.Write(e.out)
	return err
}

// jpegFlush is how many bytes of the answer are gathered before they are
// written.
const jpegFlush = 64 << 10

// jpegWriter gathers one picture's JPEG.
type jpegWriter struct {
	w   io.Writer
	err error
	out []byte
	// acc holds n bits not yet in out, right-aligned.
	acc uint64
	n   uint
	// quant is each table's quantizers in zigzag order, as DQT writes
	// them; scale is what a DCT output in natural order is multiplied by
	// to be quantized: 1 / (quantizer × the AAN scale factors × 8).
	quant [2][64]byte
	scale [2][64]float32
}

// tables scales the standard tables (Annex K.1) to quality q as libjpeg
// does.
func (e *jpegWriter) tables(q int) {
	q = min(max(q, 1), 100)
	s := 200 - 2*q
	if q < 50 {
		s = 5000 / q
	}
	for t, base := range [2]*[64]byte{&jpegLuma, &jpegChroma} {
		for k, nat := range jpegZigzag {
			v := min(max((int(base[nat])*s+50)/100, 1), 255)
			e.quant[t][k] = byte(v)
			e.scale[t][nat] = 1 / (float32(v) * aanScale[nat/8] * aanScale[nat%8] * 8)
		}
	}
}

// header writes SOI, the quantization tables, the frame (three
// components, luma sampled 2×2, chroma 1×1), the Huffman tables and the
// scan's header.
func (e *jpegWriter) header(w, h int) {
	e.out = append(e.out, 0xff, 0xd8)
	e.out = append(e.out, 0xff, 0xdb, 0, 2+2*65)
	for t := range e.quant {
		e.out = append(e.out, byte(t))
		e.out = append(e.out, e.quant[t][:]...)
	}
	e.out = append(e.out, 0xff, 0xc0, 0, 17, 8)
	e.out = binary.BigEndian.AppendUint16(e.out, uint16(h))
	e.out = binary.BigEndian.AppendUint16(e.out, uint16(w))
	e.out = append(e.out, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	for _, t := range []*huffman{&jpegDCLuma, &jpegACLuma, &jpegDCChroma, &jpegACChroma} {
		e.out = append(e.out, 0xff, 0xc4)
		e.out = binary.BigEndian.AppendUint16(e.out, uint16(2+1+16+len(t.values)))
		e.out = append(e.out, t.class)
		e.out = append(e.out, t.counts[:]...)
		e.out = append(e.out, t.values...)
	}
	e.out = append(e.out, 0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0)
}

// put appends the n low bits of v to the scan (n at most 27).
func (e *jpegWriter) put(v uint32, n uint) {
	e.acc = e.acc<<n | uint64(v)
	e.n += n
	if e.n >= 32 {
		e.flush()
	}
}

// flush moves 32 of the bits gathered into the scan, four bytes at a
// time, stuffing a zero after every 0xFF byte. It is kept out of put,
// which is then small enough to be inlined where a code is written.
//
//go:noinline
func (e *jpegWriter) flush() {
	e.n -= 32
	w := uint32(e.acc >> e.n)
	if x := ^w; (x-0x01010101)&^x&0x80808080 == 0 {
		e.out = binary.BigEndian.AppendUint32(e.out, w) // no 0xFF byte
		return
	}
	for sh := 24; sh >= 0; sh -= 8 {
		c := byte(w >> sh)
		e.out = append(e.out, c)
		if c == 0xff {
			e.out = append(e.out, 0)
		}
	}
}

// pad writes the bits left, the last byte filled with one bits.
func (e *jpegWriter) pad() {
	e.acc = e.acc<<7 | 0x7f
	e.n += 7
	for e.n >= 8 {
		e.n -= 8
		c := byte(e.acc >> e.n)
		e.out = append(e.out, c)
		if c == 0xff {
			e.out = append(e.out, 0)
		}
	}
	e.n = 0
}

// block transforms, quantizes and codes one 8×8 block whose DC
// difference is taken from prev; it returns the block's DC. The AC
// coefficients are coded by walking a mask of the non-zero ones, which
// spares a branch per coefficient that a photograph makes unpredictable.
func (e *jpegWriter) block(b, scale *[64]float32, prev int32, dcT, acT *huffman) int32 {
	fdct(b)
	var z [64]int32
	var nonzero uint64
	for k, nat := range jpegZigzag {
		nat &= 63
		v := round(b[nat] * scale[nat])
		z[k] = v
		nonzero |= uint64(uint32(v|-v)>>31) << k
	}
	e.put(code(dcT, 0, z[0]-prev))
	last := 0
	for ac := nonzero &^ 1; ac != 0; ac &= ac - 1 {
		k := bits.TrailingZeros64(ac)
		run := uint32(k - last - 1)
		for run > 15 {
			e.put(acT.code[0xf0], uint(acT.size[0xf0])) // sixteen zeros
			run -= 16
		}
		e.put(code(acT, run, z[k&63]))
		last = k
	}
	if last < 63 {
		e.put(acT.code[0x00], uint(acT.size[0x00])) // end of block
	}
	return z[0]
}

// round is f rounded to the nearest integer, ties to even, for |f| under
// 2²²: adding 1.5 × 2²³ leaves the integer in the float's low mantissa
// bits, without a conversion.
func round(f float32) int32 {
	return int32(math.Float32bits(f+0x1.8p23)) - 0x4b400000
}

// code is v after run zeros as the scan writes it: the Huffman code of
// (run, v's size in bits) followed by v's bits (one's complement when
// negative), computed without a branch on v's sign; and its length.
func code(t *huffman, run uint32, v int32) (uint32, uint) {
	s := v >> 31
	n := uint32(bits.Len32(uint32((v ^ s) - s)))
	sym := (run<<4 | n) & 0xff
	return t.code[sym]<<n | uint32(v+s)&(1<<n-1), uint(t.size[sym]) + uint(n)
}

// mcu is one 16×16 area as four luma blocks and two chroma blocks,
// level-shifted to be centred on zero.
type mcu struct {
	y      [4][64]float32
	cb, cr [64]float32
}

// load reads the 16×16 area at (x0, y0) of img, repeating the last row
// and column where it runs past the picture's edge: such an area is
// copied into a tile first, so that the conversion has one path.
func (m *mcu) load(img *image.RGBA, x0, y0 int) {
	b := img.Bounds()
	if x0+16 <= b.Max.X && y0+16 <= b.Max.Y {
		at := img.PixOffset(x0, y0)
		m.convert(img.Pix[at:at+15*img.Stride+64], img.Stride)
		return
	}
	var tile [16 * 64]byte
	n := min(16, b.Max.X-x0) * 4
	for r := range 16 {
		y := min(y0+r, b.Max.Y-1) - b.Min.Y
		at := y*img.Stride + (x0-b.Min.X)*4
		row := tile[r*64 : r*64+64]
		copy(row, img.Pix[at:at+n])
		for c := n; c < 64; c += 4 {
			copy(row[c:c+4], row[n-4:n])
		}
	}
	m.convert(tile[:], 64)
}

// levelShift is each sample value less 128, as a DCT takes it: a load
// from this table costs less than the conversion and subtraction.
var levelShift = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) - 128
	}
	return t
}()

// planes reads the 16×16 area at (x0, y0) of a YCbCr picture whose
// origin is at zero, repeating the last row and column where it runs
// past the picture's edge.
func (m *mcu) planes(p *image.YCbCr, x0, y0 int) {
	w, h := p.Rect.Dx(), p.Rect.Dy()
	for r := range 16 {
		y := min(y0+r, h-1)
		row := p.Y[y*p.YStride : y*p.YStride+w]
		o := r % 8 * 8
		for half := range 2 {
			blk := &m.y[r/8*2+half]
			xs := x0 + 8*half
			if xs+8 <= w {
				px, dst := (*[8]byte)(row[xs:xs+8]), (*[8]float32)(blk[o:o+8])
				for c, v := range px {
					dst[c] = levelShift[v]
				}
				continue
			}
			for c := range 8 {
				blk[o+c] = float32(row[min(xs+c, w-1)]) - 128
			}
		}
	}
	if p.SubsampleRatio == image.YCbCrSubsampleRatio420 && x0+16 <= w && y0+16 <= h {
		for r := range 8 {
			at := (y0/2+r)*p.CStride + x0/2
			cb, cr := (*[8]byte)(p.Cb[at:at+8]), (*[8]byte)(p.Cr[at:at+8])
			dcb, dcr := (*[8]float32)(m.cb[r*8:r*8+8]), (*[8]float32)(m.cr[r*8:r*8+8])
			for c := range 8 {
				dcb[c], dcr[c] = levelShift[cb[c]], levelShift[cr[c]]
			}
		}
		return
	}
	for r := range 8 {
		for c := range 8 {
			var cb, cr int
			for _, d := range [4][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				at := p.COffset(min(x0+2*c+d[0], w-1), min(y0+2*r+d[1], h-1))
				cb += int(p.Cb[at])
				cr += int(p.Cr[at])
			}
			m.cb[r*8+c] = float32(cb)/4 - 128
			m.cr[r*8+c] = float32(cr)/4 - 128
		}
	}
}

// Fixed-point (16 fractional bits) JFIF coefficients: luma, and chroma
// of a sum of four pixels (hence 2¹⁴).
const (
	yr, yg, yb    = 19595, 38470, 7471 // 0.299, 0.587, 0.114
	cbr, cbg, cbb = -2765, -5427, 8192 // -0.168736, -0.331264, 0.5, ÷ 4
	crr, crg, crb = 8192, -6860, -1332 // 0.5, -0.418688, -0.081312, ÷ 4
	fix16         = 1.0 / (1 << 16)
)

// convert turns 16 rows of 16 RGBA pixels, stride bytes apart, into
// YCbCr (JFIF's coefficients), luma per pixel and chroma per 2×2 pixels,
// in integers with one conversion to float per value.
func (m *mcu) convert(px []byte, stride int) {
	for r := range 16 {
		row := px[r*stride : r*stride+64 : r*stride+64]
		for half := range 2 {
			blk := &m.y[r/8*2+half]
			h := row[half*32 : half*32+32 : half*32+32]
			o := r % 8 * 8
			for c := range 8 {
				p := h[4*c : 4*c+3 : 4*c+3]
				blk[o+c] = float32(yr*int32(p[0])+yg*int32(p[1])+yb*int32(p[2]))*fix16 - 128
			}
		}
	}
	for r := range 8 {
		top := px[2*r*stride : 2*r*stride+64 : 2*r*stride+64]
		bottom := px[(2*r+1)*stride : (2*r+1)*stride+64 : (2*r+1)*stride+64]
		for c := range 8 {
			p, q := top[8*c:8*c+8:8*c+8], bottom[8*c:8*c+8:8*c+8]
			sr := int32(p[0]) + int32(p[4]) + int32(q[0]) + int32(q[4])
			sg := int32(p[1]) + int32(p[5]) + int32(q[1]) + int32(q[5])
			sb := int32(p[2]) + int32(p[6]) + int32(q[2]) + int32(q[6])
			m.cb[r*8+c] = float32(cbr*sr+cbg*sg+cbb*sb) * fix16
			m.cr[r*8+c] = float32(crr*sr+crg*sg+crb*sb) * fix16
		}
	}
}

// aanScale is the factor by which the AAN DCT's output k is larger than
// the DCT's, per dimension (before the overall 8).
var aanScale = [8]float32{1, 1.387039845, 1.306562965, 1.175875602, 1, 0.785694958, 0.541196100, 0.275899379}

// fdct is the forward DCT of Arai, Agui and Nakajima on rows then
// columns, in place; each output is scaled by aanScale of its row and
// column and by 8, which the quantization's scale undoes.
func fdct(b *[64]float32) {
	var t [64]float32
	fdctRows(&t, b)
	fdctRows(b, &t)
}

// fdctRows is the 8-point AAN DCT of each row of src, written as a column
// of dst: twice, it is the DCT of rows then columns, the block transposed
// twice. Rows read as arrays and columns written at constant offsets
// need no bounds check.
func fdctRows(dst, src *[64]float32) {
	for i := range 8 {
		r := (*[8]float32)(src[i*8 : i*8+8])
		t0, t7 := r[0]+r[7], r[0]-r[7]
		t1, t6 := r[1]+r[6], r[1]-r[6]
		t2, t5 := r[2]+r[5], r[2]-r[5]
		t3, t4 := r[3]+r[4], r[3]-r[4]

		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		dst[i], dst[32+i] = t10+t11, t10-t11
		z1 := (t12 + t13) * 0.707106781
		dst[16+i], dst[48+i] = t13+z1, t13-z1

		t10, t11, t12 = t4+t5, t5+t6, t6+t7
		z5 := (t10 - t12) * 0.382683433
		z2 := 0.541196100*t10 + z5
		z4 := 1.306562965*t12 + z5
		z3 := t11 * 0.707106781
		z11, z13 := t7+z3, t7-z3
		dst[40+i], dst[24+i] = z13+z2, z13-z2
		dst[8+i], dst[56+i] = z11+z4, z11-z4
	}
}
