package geom

import "slices"

// fixed point of cv::fillPoly's edges.
const (
	xyShift = 16
	xyOne   = 1 << xyShift
)

// FillPoly sets to v the pixels of a w×h mask (row-major) that
// cv2.fillPoly(mask, [pts], v) sets with 8-connected lines and no
// fractional bits: the polygon's outline as cv::line draws it, and the
// scan lines between its edges (even-odd), with OpenCV's 16.16 fixed
// point and clipping.
func FillPoly(mask []uint8, w, h int, pts []Point, v uint8) {
	n := len(pts)
	if n == 0 || w <= 0 || h <= 0 {
		return
	}
	type edge struct {
		y0, y1 int
		x, dx  int64
	}
	edges := make([]edge, 0, n)
	p0 := pts[n-1]
	for _, p1 := range pts {
		drawLine(mask, w, h, p0, p1, v)
		if p0.Y != p1.Y {
			a, b := p0, p1
			if a.Y > b.Y {
				a, b = b, a
			}
			dx := (int64(p1.X-p0.X) << xyShift) / int64(p1.Y-p0.Y)
			edges = append(edges, edge{y0: a.Y, y1: b.Y, x: int64(a.X) << xyShift, dx: dx})
		}
		p0 = p1
	}
	if len(edges) < 2 {
		return
	}
	yMin, yMax := edges[0].y0, edges[0].y1
	for _, e := range edges {
		yMin, yMax = min(yMin, e.y0), max(yMax, e.y1)
	}
	xs := make([]int64, 0, len(edges))
	for y := max(yMin, 0); y < min(yMax, h); y++ {
		xs = xs[:0]
		for _, e := range edges {
			if e.y0 <= y && y < e.y1 {
				xs = append(xs, e.x+int64(y-e.y0)*e.dx)
			}
		}
		slices.Sort(xs)
		row := mask[y*w : y*w+w]
		for i := 0; i+1 < len(xs); i += 2 {
			x1 := int((xs[i] + xyOne - 1) >> xyShift)
			x2 := int(xs[i+1] >> xyShift)
			if x1 < w && x2 >= 0 {
				x1, x2 = max(x1, 0), min(x2, w-1)
				for x := x1; x <= x2; x++ {
					row[x] = v
				}
			}
		}
	}
}

// drawLine is cv::line with 8-connectivity: Bresenham from the left end,
// the line first clipped to the mask as cv::clipLine clips it.
func drawLine(mask []uint8, w, h int, p1, p2 Point, v uint8) {
	if uint(p1.X) >= uint(w) || uint(p2.X) >= uint(w) || uint(p1.Y) >= uint(h) || uint(p2.Y) >= uint(h) {
		var ok bool
		if p1, p2, ok = clipLine(w, h, p1, p2); !ok {
			return
		}
	}
	dx, dy := p2.X-p1.X, p2.Y-p1.Y
	if dx < 0 {
		dx, dy = -dx, -dy
		p1 = p2
	}
	// step along the major axis (sx, sy); the minor step (mx, my)
	sx, sy, mx, my := 1, 0, 0, 1
	if dy < 0 {
		dy, my = -dy, -1
	}
	if dy > dx {
		dx, dy = dy, dx
		sx, sy, mx, my = 0, my, 1, 0
	}
	err := dx - (dy + dy)
	plus, minus := dx+dx, -(dy + dy)
	x, y := p1.X, p1.Y
	for range dx + 1 {
		mask[y*w+x] = v
		if err < 0 {
			err += minus + plus
			x, y = x+sx+mx, y+sy+my
		} else {
			err += minus
			x, y = x+sx, y+sy
		}
	}
}

// clipLine is cv::clipLine: the part of the segment inside the w×h
// rectangle, the ends moved with OpenCV's integer arithmetic.
func clipLine(w, h int, p1, p2 Point) (Point, Point, bool) {
	right, bottom := int64(w-1), int64(h-1)
	x1, y1, x2, y2 := int64(p1.X), int64(p1.Y), int64(p2.X), int64(p2.Y)
	code := func(x, y int64) int {
		c := 0
		if x < 0 {
			c |= 1
		}
		if x > right {
			c |= 2
		}
		if y < 0 {
			c |= 4
		}
		if y > bottom {
			c |= 8
		}
		return c
	}
	xcode := func(x int64) int { return code(x, 0) & 3 }
	c1, c2 := code(x1, y1), code(x2, y2)
	if c1&c2 == 0 && c1|c2 != 0 {
		if c1&12 != 0 {
			a := bottom
			if c1 < 8 {
				a = 0
			}
			x1 += int64(float64(a-y1) * float64(x2-x1) / float64(y2-y1))
			y1 = a
			c1 = xcode(x1)
		}
		if c2&12 != 0 {
			a := bottom
			if c2 < 8 {
				a = 0
			}
			x2 += int64(float64(a-y2) * float64(x2-x1) / float64(y2-y1))
			y2 = a
			c2 = xcode(x2)
		}
		if c1&c2 == 0 && c1|c2 != 0 {
			if c1 != 0 {
				a := right
				if c1 == 1 {
					a = 0
				}
				y1 += int64(float64(a-x1) * float64(y2-y1) / float64(x2-x1))
				x1 = a
				c1 = 0
			}
			if c2 != 0 {
				a := right
				if c2 == 1 {
					a = 0
				}
				y2 += int64(float64(a-x2) * float64(y2-y1) / float64(x2-x1))
				x2 = a
				c2 = 0
			}
		}
	}
	return Point{int(x1), int(y1)}, Point{int(x2), int(y2)}, c1|c2 == 0
}
