package draw

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"

	"github.com/klauspost/compress/flate"
)

// pngChunk is the most bytes of compressed pixels one IDAT chunk holds.
const pngChunk = 64 << 10

// encodePNG writes img as an 8-bit RGB PNG, each row filtered with Up
// (the difference from the row above) and compressed at deflate's fastest
// level by klauspost/compress's flate, which costs about half what
// compress/flate's does and writes a smaller stream (BENCHMARKS.md,
// detection), in a zlib stream whose checksum adler computes. Up makes photographs 10–20 % smaller than Sub for the same
// time, and is taken straight from the RGBA rows. Image/png's encoder tries all five filters on every row and
// keeps the one that looks smallest: on a photograph that search costs
// more than the compression, for an answer about as large (see
// BENCHMARKS.md). A picture that is not opaque (opaque false) goes to
// image/png, which keeps its alpha.
func encodePNG(w io.Writer, img *image.RGBA, opaque bool) error {
	if !opaque {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	bw := bufio.NewWriterSize(w, pngChunk+12)
	if _, err := bw.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(width))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(height))
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8 bits, RGB, deflate, adaptive filtering, no interlace
	if err := writeChunk(bw, "IHDR", ihdr); err != nil {
		return err
	}
	// The pixels are a zlib stream (RFC 1950): its header (deflate, a
	// 32 KiB window, the fastest level), the rows deflated, and their
	// Adler-32 checksum, computed here (adler) rather than by hash/adler32.
	idat := &chunks{w: bw, buf: append(make([]byte, 0, pngChunk), 0x78, 0x01)}
	z, err := flate.NewWriter(idat, flate.BestSpeed)
	if err != nil {
		return err
	}
	sum := newAdler()
	// Each row as its filter byte and its differences from the row above,
	// as RGB (a byte to spare for upRow); the first row's from zeros.
	row := make([]byte, 1+3*width+1)
	row[0] = 2 // Up
	prev := make([]byte, 4*width)
	for y := range height {
		cur := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):][:4*width]
		upRow(row[1:], cur, prev)
		sum.update(row[:1+3*width])
		if _, err := z.Write(row[:1+3*width]); err != nil {
			return err
		}
		prev = cur
	}
	if err := z.Close(); err != nil {
		return err
	}
	if _, err := idat.Write(binary.BigEndian.AppendUint32(nil, sum.sum())); err != nil {
		return err
	}
	if err := idat.flush(); err != nil {
		return err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

// Opaque says whether every pixel of img has an alpha of 255, the alphas
// of eight pixels at a time ANDed: 3.5 times image.RGBA's Opaque.
func Opaque(img *image.RGBA) bool {
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		row := img.Pix[img.PixOffset(img.Rect.Min.X, y):][:4*img.Rect.Dx()]
		all := ^uint64(0)
		for len(row) >= 32 {
			all &= binary.LittleEndian.Uint64(row) & binary.LittleEndian.Uint64(row[8:]) &
				binary.LittleEndian.Uint64(row[16:]) & binary.LittleEndian.Uint64(row[24:])
			row = row[32:]
		}
		for ; len(row) >= 4; row = row[4:] {
			all &= uint64(row[3])<<24 | 0xffffffff00ffffff
		}
		if all&0xff000000ff000000 != 0xff000000ff000000 {
			return false
		}
	}
	return true
}

// upRow writes the RGBA pixels of cur less those of prev, the row above
// (PNG's Up filter), as RGB: two pixels at a time as one 64-bit word
// whose bytes are subtracted at once, without a borrow crossing from one
// to the next, and stored as two 32-bit words whose alpha bytes the next
// pixel overwrites. dst holds a byte more than the row.
func upRow(dst, cur, prev []byte) {
	const high = 0x8080808080808080
	o := 0
	for len(cur) >= 8 && len(prev) >= 8 {
		a, b := binary.LittleEndian.Uint64(cur), binary.LittleEndian.Uint64(prev)
		d := ((a | high) - (b &^ high)) ^ ((a ^ ^b) & high)
		binary.LittleEndian.PutUint32(dst[o:], uint32(d))
		binary.LittleEndian.PutUint32(dst[o+3:], uint32(d>>32))
		o, cur, prev = o+6, cur[8:], prev[8:]
	}
	if len(cur) >= 4 && len(prev) >= 4 {
		a, b := binary.LittleEndian.Uint32(cur), binary.LittleEndian.Uint32(prev)
		const high32 = high & 0xffffffff
		binary.LittleEndian.PutUint32(dst[o:], ((a|high32)-(b&^high32))^((a^^b)&high32))
	}
}

// writeChunk writes one PNG chunk: its length, type, data and CRC.
func writeChunk(w io.Writer, kind string, data []byte) error {
	head := binary.BigEndian.AppendUint32(make([]byte, 0, 8), uint32(len(data)))
	head = append(head, kind...)
	crc := crc32.Update(crc32.ChecksumIEEE(head[4:]), crc32.IEEETable, data)
	if _, err := w.Write(head); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, crc))
	return err
}

// chunks cuts the compressed pixels into IDAT chunks of pngChunk bytes.
type chunks struct {
	w   io.Writer
	buf []byte
}

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), pngChunk-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == pngChunk {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (c *chunks) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, "IDAT", c.buf)
	c.buf = c.buf[:0]
	return err
}
