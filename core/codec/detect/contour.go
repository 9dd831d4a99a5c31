package detect

// The eight neighbours of a pixel, clockwise on the screen (rows grow
// downwards) from the east: (dx, dy).
var around = [8][2]int{{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}}

// west is the index of the western neighbour in around.
const west = 4

// outerContour is the outer border of the raster's largest 8-connected
// component (the first of the largest, in raster order), as OpenCV's
// findContours with RETR_EXTERNAL and CHAIN_APPROX_SIMPLE gives it:
// Suzuki and Abe's border following from the component's first pixel,
// then only the ends of each horizontal, vertical or diagonal run. Points
// are (x, y) in the raster's pixels; nil when the raster is empty.
func outerContour(r *raster) [][2]int {
	start := largestComponent(r)
	if start < 0 {
		return nil
	}
	x0, y0 := start%r.w, start/r.w
	set := func(x, y int) bool { return x >= 0 && y >= 0 && x < r.w && y < r.h && r.pix[y*r.w+x] != 0 }
	// The first pixel's western neighbour is background: look clockwise
	// from it for the border's next pixel.
	d1 := -1
	for k := range 8 {
		d := (west + k) % 8
		if set(x0+around[d][0], y0+around[d][1]) {
			d1 = d
			break
		}
	}
	if d1 < 0 {
		return [][2]int{{x0, y0}}
	}
	x1, y1 := x0+around[d1][0], y0+around[d1][1]
	var pts [][2]int
	// (cx, cy) is the current pixel, prev the direction from it to the
	// pixel before it on the border.
	cx, cy, prev := x0, y0, d1
	for {
		// Counterclockwise from the one after prev, the next pixel.
		next := prev
		for k := 1; k <= 8; k++ {
			d := (prev - k + 16) % 8
			if set(cx+around[d][0], cy+around[d][1]) {
				next = d
				break
			}
		}
		pts = append(pts, [2]int{cx, cy})
		nx, ny := cx+around[next][0], cy+around[next][1]
		if nx == x0 && ny == y0 && cx == x1 && cy == y1 {
			break
		}
		cx, cy, prev = nx, ny, (next+4)%8
	}
	return simplify(pts)
}

// simplify keeps the points of a closed chain where its direction
// changes (CHAIN_APPROX_SIMPLE).
func simplify(pts [][2]int) [][2]int {
	n := len(pts)
	if n < 3 {
		return pts
	}
	dir := func(a, b [2]int) [2]int { return [2]int{b[0] - a[0], b[1] - a[1]} }
	out := make([][2]int, 0, n)
	for k := range pts {
		in := dir(pts[(k+n-1)%n], pts[k])
		outd := dir(pts[k], pts[(k+1)%n])
		if in != outd {
			out = append(out, pts[k])
		}
	}
	if len(out) == 0 {
		return pts[:1]
	}
	return out
}

// largestComponent is the index of the first pixel, in raster order, of
// the raster's largest 8-connected component (the first of equals); -1
// when the raster is empty.
func largestComponent(r *raster) int {
	seen := make([]bool, len(r.pix))
	stack := make([]int, 0, 64)
	bestStart, bestSize := -1, 0
	for i, v := range r.pix {
		if v == 0 || seen[i] {
			continue
		}
		size := 0
		seen[i] = true
		stack = append(stack[:0], i)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			size++
			x, y := p%r.w, p/r.w
			for _, d := range around {
				nx, ny := x+d[0], y+d[1]
				if nx < 0 || ny < 0 || nx >= r.w || ny >= r.h {
					continue
				}
				q := ny*r.w + nx
				if r.pix[q] != 0 && !seen[q] {
					seen[q] = true
					stack = append(stack, q)
				}
			}
		}
		if size > bestSize {
			bestStart, bestSize = i, size
		}
	}
	return bestStart
}
