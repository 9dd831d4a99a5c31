package geom

// chain codes: direction s moves by codeDelta[s] (0 right, 2 up, 4 left,
// 6 down), as OpenCV's icvCodeDeltas.
var codeDelta = [8]Point{{1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}, {0, 1}, {1, 1}}

// marks written into the working map while following borders, as OpenCV's
// 8-bit contour scanner writes them: visited (nbd 2) and visited with its
// right neighbour outside (nbd | -128).
const (
	markVisited int8 = 2
	markRight   int8 = 2 | -128
)

// FindContours returns the borders of the non-zero region of a w×h map
// (row-major, one byte a pixel), as cv2.findContours(map, RETR_LIST,
// CHAIN_APPROX_SIMPLE) returns them: outer borders and hole borders alike,
// each as the corners of its 8-connected chain (horizontal, vertical and
// diagonal runs reduced to their ends), in OpenCV's order (the reverse of
// the raster order in which their first pixel is met) and from OpenCV's
// starting pixel. Pixels on the map's edge count, as OpenCV 4 counts them
// (it pads the map with a zero frame).
func FindContours(bin []uint8, w, h int) [][]Point {
	if w <= 0 || h <= 0 || len(bin) < w*h {
		return nil
	}
	W, H := w+2, h+2
	img := make([]int8, W*H)
	for y := range h {
		row := bin[y*w : y*w+w]
		for x, v := range row {
			if v != 0 {
				img[(y+1)*W+x+1] = 1
			}
		}
	}
	var found [][]Point
	for y := 1; y < H-1; y++ {
		prev := int8(0)
		for x := 1; x < W-1; x++ {
			p := img[y*W+x]
			if p == prev {
				continue
			}
			hole := 0
			if prev != 0 || p != 1 {
				if p != 0 || prev < 1 {
					prev = p
					continue
				}
				hole = 1
			}
			found = append(found, fetchContour(img, W, y*W+x-hole, Point{x - hole - 1, y - 1}, hole == 1))
			prev = img[y*W+x]
		}
	}
	for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
		found[i], found[j] = found[j], found[i]
	}
	return found
}

// fetchContour follows one border from pixel i0 (at pt in the caller's
// coordinates), marking it, and returns its chain's corners: OpenCV's
// icvFetchContour with the simple approximation.
func fetchContour(img []int8, step, i0 int, pt Point, hole bool) []Point {
	var deltas [16]int
	d := [8]int{1, -step + 1, -step, -step - 1, -1, step - 1, step, step + 1}
	copy(deltas[:8], d[:])
	copy(deltas[8:], d[:])

	s, sEnd := 4, 4
	if hole {
		s, sEnd = 0, 0
	}
	var i1 int
	for {
		s = (s - 1) & 7
		i1 = i0 + deltas[s]
		if img[i1] != 0 || s == sEnd {
			break
		}
	}
	if s == sEnd {
		img[i0] = markRight
		return []Point{pt}
	}
	var out []Point
	i3, prevS := i0, s^4
	for {
		sEnd = s
		s = min(s, 15)
		var i4 int
		for s < 15 {
			s++
			i4 = i3 + deltas[s]
			if img[i4] != 0 {
				break
			}
		}
		s &= 7
		if uint(s-1) < uint(sEnd) {
			img[i3] = markRight
		} else if img[i3] == 1 {
			img[i3] = markVisited
		}
		if s != prevS {
			out = append(out, pt)
			prevS = s
		}
		pt.X += codeDelta[s].X
		pt.Y += codeDelta[s].Y
		if i4 == i0 && i3 == i1 {
			break
		}
		i3 = i4
		s = (s + 4) & 7
	}
	return out
}
