package draw

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"

	"github.com/klauspost/compress/zlib"
)

// pngChunk is the most bytes of compressed pixels one IDAT chunk holds.
const pngChunk = 64 << 10

// encodePNG writes img as an 8-bit RGB PNG, each row filtered with Sub
// (the difference from the pixel on its left) and compressed at
// deflate's fastest level by klauspost/compress's zlib, which costs about
// half what compress/zlib's does and writes a smaller stream (BENCHMARKS.md,
// detection). Image/png's encoder tries all five filters on every row
// and keeps the one that looks smallest: on a photograph that search
// costs more than the compression, for an answer about as large (see
// BENCHMARKS.md). A picture that is not opaque goes to image/png, which
// keeps its alpha.
func encodePNG(w io.Writer, img *image.RGBA) error {
	if !img.Opaque() {
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
	idat := &chunks{w: bw, buf: make([]byte, 0, pngChunk)}
	z, err := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	if err != nil {
		return err
	}
	row := make([]byte, 1+3*width+1) // a byte to spare for subRow
	row[0] = 1                       // Sub
	for y := range height {
		subRow(row[1:], img.Pix[y*img.Stride:y*img.Stride+4*width])
		if _, err := z.Write(row[:1+3*width]); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
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

// subRow writes the RGBA pixels of src as RGB, each byte less the same
// byte of the pixel on its left (PNG's Sub filter), a pixel at a time as
// one 32-bit word: the four bytes are subtracted at once, without a
// borrow crossing from one to the next, and the word's alpha byte is
// overwritten by the next pixel. dst holds a byte more than the row.
func subRow(dst, src []byte) {
	const high = 0x80808080
	var prev uint32
	for x := 0; x+4 <= len(src); x += 4 {
		p := binary.LittleEndian.Uint32(src[x:])
		binary.LittleEndian.PutUint32(dst[x/4*3:], ((p|high)-(prev&^high))^((p^^prev)&high))
		prev = p
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
