package detect

// RLE is a mask as COCO's run-length encoding: over the picture's pixels
// in column-major order (down each column, the columns left to right),
// the lengths of alternating runs of 0 and 1, starting with 0 (a mask
// whose first pixel is set starts with an empty run).
type RLE struct {
	Height, Width int
	Counts        []uint32
}

// rleOf encodes a mask that is zero outside the window of ww×wh pixels
// at (x0, y0) of a picture of w×h pixels; win holds the window row by
// row, non-zero where the mask is set.
func rleOf(win []uint8, x0, y0, ww, wh, w, h int) *RLE {
	r := &RLE{Height: h, Width: w}
	cur, run := uint8(0), 0
	push := func(v uint8, n int) {
		if n <= 0 {
			return
		}
		if v != cur {
			r.Counts = append(r.Counts, uint32(run))
			cur, run = v, 0
		}
		run += n
	}
	push(0, x0*h)
	for x := range ww {
		push(0, y0)
		for y := range wh {
			v := uint8(0)
			if win[y*ww+x] != 0 {
				v = 1
			}
			push(v, 1)
		}
		push(0, h-y0-wh)
	}
	push(0, (w-x0-ww)*h)
	r.Counts = append(r.Counts, uint32(run))
	return r
}

// String is the counts in COCO's compressed form (pycocotools'
// rleToString): each count, less the count two before it from the third
// on, in chunks of 5 bits, least significant first, a sixth bit saying
// more follow, each chunk written as the character 48 + chunk.
func (r *RLE) String() string {
	s := make([]byte, 0, len(r.Counts)*2)
	for i, c := range r.Counts {
		x := int64(c)
		if i > 2 {
			x -= int64(r.Counts[i-2])
		}
		for more := true; more; {
			ch := byte(x & 0x1f)
			x >>= 5
			if ch&0x10 != 0 {
				more = x != -1
			} else {
				more = x != 0
			}
			if more {
				ch |= 0x20
			}
			s = append(s, ch+48)
		}
	}
	return string(s)
}

// Area is the number of pixels set.
func (r *RLE) Area() int {
	n := 0
	for i := 1; i < len(r.Counts); i += 2 {
		n += int(r.Counts[i])
	}
	return n
}
