package image

import "encoding/binary"

// jpegOrientation returns the EXIF orientation (1–8) of a JPEG, 1 when it
// has none or it is unreadable.
//
// It is hand-written rather than taken from an EXIF library: it needs one
// tag of IFD0, the libraries on offer are either unmaintained
// (rwcarlsen/goexif) or large (dsoprea/go-exif), and this reader is a few
// dozen lines of bounds-checked TIFF parsing that never allocates. It is
// fuzzed by FuzzTensor and FuzzOrientation.
func jpegOrientation(data []byte) int {
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return 1
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			return 1
		}
		marker := data[i+1]
		switch {
		case marker == 0xff: // fill byte
			i++
			continue
		case marker == 0xda || marker == 0xd9: // start of scan, end: no EXIF before
			return 1
		case marker >= 0xd0 && marker <= 0xd7 || marker == 0x01:
			i += 2
			continue
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if marker == 0xe1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			if o := tiffOrientation(seg[6:]); o != 0 {
				return o
			}
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of IFD0 of a TIFF structure; 0 when
// absent or out of range.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 0
	}
	count := int64(bo.Uint16(t[ifd:]))
	for k := int64(0); k < count; k++ {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 0
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		typ, n := bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:])
		var v int
		switch {
		case typ == 3 && n == 1: // SHORT
			v = int(bo.Uint16(t[e+8:]))
		case typ == 4 && n == 1: // LONG
			v = int(bo.Uint32(t[e+8:]))
		default:
			return 0
		}
		if v < 1 || v > 8 {
			return 0
		}
		return v
	}
	return 0
}

// orient returns p as displayed under EXIF orientation o (2–8), a new
// buffer.
func orient(p pixels, o int) pixels {
	w, h := p.w, p.h
	// Displayed (x, y) comes from stored pixel base + x*dx + y*dy.
	var base, dx, dy int
	switch o {
	case 2:
		base, dx, dy = w-1, -1, w
	case 3:
		base, dx, dy = (h-1)*w+w-1, -1, -w
	case 4:
		base, dx, dy = (h-1)*w, 1, -w
	case 5:
		base, dx, dy = 0, w, 1
	case 6:
		base, dx, dy = (h-1)*w, -w, 1
	case 7:
		base, dx, dy = (h-1)*w+w-1, -w, -1
	case 8:
		base, dx, dy = w-1, w, -1
	default:
		return p
	}
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := newPixels(ow, oh, p.c)
	c := p.c
	for y := 0; y < oh; y++ {
		s := base + y*dy
		row := out.pix[y*ow*c : (y+1)*ow*c]
		if c == 1 {
			for x := range row {
				row[x] = p.pix[s]
				s += dx
			}
			continue
		}
		for x := 0; x < ow; x++ {
			copy(row[3*x:3*x+3], p.pix[3*s:3*s+3])
			s += dx
		}
	}
	return out
}
