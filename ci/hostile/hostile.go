// Package hostile makes what an attacker sends a model server: pictures
// that are tiny on the wire and costly to decode, and the bodies that
// carry them. The bounds tests (cmd/svc) and the soak (make soak) send
// them, and expect refusals, not a server that falls over. It imports
// the standard library only, so that the soak's own module can use it.
package hostile

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// GIF1x1 is a one-pixel GIF (35 bytes): a batch of many of them is
// nearly free to send, and each becomes a whole item of the model's
// input tensor.
func GIF1x1() []byte {
	return []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00" +
		"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b")
}

// ProgressiveJPEG is a valid grey progressive JPEG of w×h pixels made of
// scans empty scans: each codes every block's AC coefficients as zero
// with end-of-band runs, a few dozen bytes, yet Go's decoder walks every
// block of the picture in every scan. stray puts one byte that is not a
// marker between the header and the first scan, which libjpeg and Go's
// decoder skip.
func ProgressiveJPEG(w, h, scans int, stray bool) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xff, 0xd8})
	// One quantisation table of ones.
	segment(&b, 0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	// SOF2: 8 bits, h, w, one component (id 1, 1×1, table 0).
	segment(&b, 0xc2, []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 1, 1, 0x11, 0})
	// An AC table of one code, '0', for EOB14 (a run of 2^14 + 14 bits of
	// blocks).
	table := append([]byte{0x10, 1}, make([]byte, 15)...)
	segment(&b, 0xc4, append(table, 0xe0))
	if stray {
		b.WriteByte(0x00)
	}
	blocks := ((w + 7) / 8) * ((h + 7) / 8)
	for range scans {
		// SOS: one component, table 0/0, Ss=1 Se=63 Ah=Al=0.
		segment(&b, 0xda, []byte{1, 1, 0x00, 1, 63, 0})
		var bw bitWriter
		for left := blocks; left > 0; left -= 32767 {
			run := min(left, 32767)
			bw.put(0, 1)
			bw.put(uint32(run-1<<14), 14)
		}
		b.Write(bw.flush())
	}
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}

func segment(b *bytes.Buffer, marker byte, payload []byte) {
	b.Write([]byte{0xff, marker, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)})
	b.Write(payload)
}

// bitWriter writes entropy-coded data, most significant bit first, with
// 0xFF bytes stuffed.
type bitWriter struct {
	out  []byte
	acc  uint32
	bits uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>uint(i))&1
		w.bits++
		if w.bits == 8 {
			w.emit(byte(w.acc))
			w.acc, w.bits = 0, 0
		}
	}
}

func (w *bitWriter) emit(c byte) {
	w.out = append(w.out, c)
	if c == 0xff {
		w.out = append(w.out, 0)
	}
}

// flush pads the last byte with ones, as encoders do.
func (w *bitWriter) flush() []byte {
	if w.bits > 0 {
		w.emit(byte(w.acc<<(8-w.bits) | (1<<(8-w.bits) - 1)))
		w.acc, w.bits = 0, 0
	}
	return w.out
}

// TruncatedBMP is the 54-byte header of a w×h 24-bit BMP with none of
// its pixels: a decoder that allocates the picture before reading a row
// pays for all of it.
func TruncatedBMP(w, h int) []byte {
	b := make([]byte, 54)
	copy(b, "BM")
	row := (3*w + 3) &^ 3
	binary.LittleEndian.PutUint32(b[2:], uint32(54+row*h))
	binary.LittleEndian.PutUint32(b[10:], 54)
	binary.LittleEndian.PutUint32(b[14:], 40)
	binary.LittleEndian.PutUint32(b[18:], uint32(w))
	binary.LittleEndian.PutUint32(b[22:], uint32(h))
	binary.LittleEndian.PutUint16(b[26:], 1)
	binary.LittleEndian.PutUint16(b[28:], 24)
	return b
}

// ZeroPNG16 is a w×h 16-bit RGB PNG of zeros: it compresses about a
// thousand to one, and decodes into eight bytes a pixel.
func ZeroPNG16(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 16, 2 // depth 16, truecolour
	chunk(&b, "IHDR", ihdr)
	// Each row is its filter byte (0, none) and zeros.
	chunk(&b, "IDAT", zlibZeros(int64(h)*int64(1+6*w)))
	chunk(&b, "IEND", nil)
	return b.Bytes()
}

// zeroRun is how many zeros one deflate block of zlibZeros holds.
const zeroRun = 256 << 10

// zlibZeros is a zlib stream of n zeros, made without compressing them
// all: the first zeroRun zeros are compressed at the best level and
// flushed (a whole number of bytes), and so are the next zeroRun, after
// which every further zeroRun zeros are those same bytes again. They
// decode to zeros wherever zeros precede them, as deflate's matches
// reach at most 32 KiB back. Compressing 216 MB of zeros (a 6000×6000
// picture) takes half a minute in a test built with -race; this, a
// few milliseconds.
func zlibZeros(n int64) []byte {
	total := n
	var out bytes.Buffer
	out.Write([]byte{0x78, 0xda}) // deflate, 32 KiB window, best compression
	zw, _ := flate.NewWriter(&out, flate.BestCompression)
	run := make([]byte, zeroRun)
	first := min(n, zeroRun)
	_, _ = zw.Write(run[:first])
	n -= first
	if n > zeroRun {
		_ = zw.Flush()
		start := out.Len()
		_, _ = zw.Write(run)
		_ = zw.Flush()
		again := bytes.Clone(out.Bytes()[start:])
		for n -= zeroRun; n > zeroRun; n -= zeroRun {
			out.Write(again)
		}
	}
	_, _ = zw.Write(run[:n])
	_ = zw.Close()
	// Adler-32 of zeros: the sum of the bytes stays 1, and the sum of
	// the sums grows by 1 a byte.
	b := uint32(total % 65521)
	return binary.BigEndian.AppendUint32(out.Bytes(), b<<16|1)
}

func chunk(b *bytes.Buffer, kind string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	b.WriteString(kind)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}
