package image

import (
	"bytes"
	"encoding/binary"
)

// What decoding a picture costs is known from its header, before any
// pixel is decoded: the memory the decoder allocates for the picture's
// format and depth, and, for a JPEG, one pass over its pixels per scan.
// readHeader reads both, and Plan.Inspect adds what the preprocessing
// holds beside them, so that a request's pictures are refused, or their
// memory reserved, before the work starts.

// jpegInfo is what a JPEG's markers say of its decoding, read as Go's
// decoder (image/jpeg) reads them.
type jpegInfo struct {
	// scans counts the SOS markers the decoder would process, up to the
	// walk's limit plus one.
	scans       int
	progressive bool
	// comps holds each component's sampling factors.
	comps [][2]int
	// rgb: the decoder converts the planes into an RGBA picture (an
	// RGB-coded JPEG, an Adobe APP14 marker, four components).
	rgb bool
}

// jpegWalk reads data's markers the way image/jpeg's decoder does, so
// that it sees every scan the decoder would decode: bytes between
// segments that are not a marker are skipped (libjpeg and Go's decoder
// both tolerate them; a walk that stopped at them could be fooled into
// counting no scan at all), 0xFF 0x00 and restart markers are passed
// over, fill bytes before a marker are skipped, and the walk ends at the
// end-of-image marker, at a marker the decoder refuses, or past limit
// scans. The entropy-coded data after a scan's header is passed over as
// the decoder's own loop passes over what a scan leaves: it never holds
// a marker.
func jpegWalk(data []byte, limit int) jpegInfo {
	var in jpegInfo
	for i := 2; in.scans <= limit; {
		j := bytes.IndexByte(data[min(i, len(data)):], 0xff)
		if j < 0 || i+j+1 >= len(data) {
			return in
		}
		i += j + 1
		m := data[i]
		i++
		if m == 0 {
			continue
		}
		for m == 0xff {
			if i >= len(data) {
				return in
			}
			m = data[i]
			i++
		}
		switch {
		case m == 0xd9:
			return in
		case m >= 0xd0 && m <= 0xd7:
			continue
		case !jpegSegment(m):
			// The decoder stops at a marker it does not know.
			return in
		}
		if i+2 > len(data) {
			return in
		}
		n := int(binary.BigEndian.Uint16(data[i:])) - 2
		i += 2
		if n < 0 {
			return in
		}
		seg := data[i:min(i+n, len(data))]
		switch m {
		case 0xc0, 0xc1, 0xc2:
			if in.comps != nil {
				return in // the decoder refuses a second SOF
			}
			in.progressive = m == 0xc2
			in.readSOF(seg)
		case 0xda:
			in.scans++
		case 0xee:
			in.rgb = true
		}
		i += n
	}
	return in
}

// jpegSegment reports whether m is a marker with a segment that Go's
// decoder reads or skips (the others end decoding).
func jpegSegment(m byte) bool {
	switch {
	case m >= 0xc0 && m <= 0xc2, m == 0xc4, m == 0xda, m == 0xdb, m == 0xdd, m == 0xfe:
		return true
	case m >= 0xe0 && m <= 0xef:
		return true
	}
	return false
}

// readSOF reads the components of a frame header.
func (in *jpegInfo) readSOF(seg []byte) {
	if len(seg) < 6 {
		return
	}
	n := int(seg[5])
	in.comps = make([][2]int, 0, n)
	named := 0
	for k := range n {
		if 6+3*k+2 >= len(seg) {
			break
		}
		hv := seg[7+3*k]
		in.comps = append(in.comps, [2]int{max(int(hv>>4), 1), max(int(hv&0x0f), 1)})
		if k < 3 && seg[6+3*k] == "RGB"[k] {
			named++
		}
	}
	if n == 4 || n == 3 && named == 3 {
		in.rgb = true
	}
}

// bytes is what Go's decoder allocates for a w×h JPEG of these markers:
// each component's plane (rounded up to whole MCUs), four bytes a sample
// more for a progressive JPEG's coefficients, and an RGBA picture when
// it converts the planes.
func (in jpegInfo) bytes(w, h int) int64 {
	hmax, vmax := 1, 1
	for _, c := range in.comps {
		hmax, vmax = max(hmax, c[0]), max(vmax, c[1])
	}
	if len(in.comps) == 1 {
		hmax, vmax = 1, 1
	}
	mx, my := int64((w+8*hmax-1)/(8*hmax)), int64((h+8*vmax-1)/(8*vmax))
	var planes int64
	for _, c := range in.comps {
		if len(in.comps) == 1 {
			c = [2]int{1, 1}
		}
		planes += mx * 8 * int64(c[0]) * my * 8 * int64(c[1])
	}
	if len(in.comps) == 0 {
		planes = 3 * int64(w) * int64(h)
	}
	total := planes
	if in.progressive {
		total += 4 * planes
	}
	if in.rgb {
		total += 4 * int64(w) * int64(h)
	}
	return total
}

// pngDecodedBytes is what Go's decoder allocates for a w×h PNG, from its IHDR:
// the picture at its depth (an interlaced one once more, for its passes).
func pngDecodedBytes(data []byte, w, h int) int64 {
	px := int64(w) * int64(h)
	if len(data) < 29 {
		return 8 * px
	}
	depth, ctype, interlace := data[24], data[25], data[28]
	var bpp int64
	switch ctype {
	case 0, 3: // grey, paletted
		bpp = 1
		if depth == 16 {
			bpp = 2
		}
	default: // truecolour, grey with alpha, truecolour with alpha
		bpp = 4
		if depth == 16 {
			bpp = 8
		}
	}
	if interlace != 0 {
		bpp *= 2
	}
	return bpp * px
}

// bmpDecodedBytes is what x/image/bmp allocates for a w×h BMP, and whether the
// file holds the pixel data its header declares: the decoder allocates
// the picture before it reads a row, so a truncated file is refused from
// its header instead.
func bmpDecodedBytes(data []byte, w, h int) (int64, bool) {
	px := int64(w) * int64(h)
	if len(data) < 30 {
		return 4 * px, false
	}
	offset := int64(binary.LittleEndian.Uint32(data[10:14]))
	bpp := int64(binary.LittleEndian.Uint16(data[28:30]))
	row := (int64(w)*bpp + 31) / 32 * 4
	whole := int64(len(data)) >= offset+row*int64(h)
	if bpp <= 8 {
		return px, whole
	}
	return 4 * px, whole
}

// decodedBytes is what decoding a w×h picture of format f allocates, and
// whether the file can hold it (false: a truncated BMP).
func decodedBytes(f string, data []byte, w, h int, jpeg jpegInfo) (int64, bool) {
	px := int64(w) * int64(h)
	switch f {
	case "jpeg":
		return jpeg.bytes(w, h), true
	case "png":
		return pngDecodedBytes(data, w, h), true
	case "gif":
		return px, true
	case "bmp":
		return bmpDecodedBytes(data, w, h)
	}
	// WebP: the lossless decoder's pixels and the picture, the most a
	// WebP takes.
	return 8 * px, true
}
