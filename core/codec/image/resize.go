package image

import (
	"math"

	"github.com/svc-dev/svc/core/tensor"
)

// Interpolations, as cv2.INTER_*.
const (
	interNearest = iota
	interLinear
	interCubic
	interArea
)

// OpenCV's 8-bit resize works in 11-bit fixed point
// (INTER_RESIZE_COEF_BITS).
const (
	coefBits  = 11
	coefScale = 1 << coefBits
)

// window is the part of a virtual dw×dh resize that is wanted: columns
// [x0, x0+w), rows [y0, y0+h). cover crops this way, computing only what it
// keeps (every output pixel of cv2.resize depends only on its coordinates).
type window struct{ x0, y0, w, h int }

// Resize kernels.
const (
	kernCopy = iota
	kernNearest
	kernAreaFast
	kernArea
	kernSeparable
)

// resizer is one image's resize, tables computed before the picture is
// converted, so that reads can tell which source columns and rows the
// kernel will touch.
type resizer struct {
	kernel     int
	sw, sh, c  int
	dw, dh     int
	win        window
	ix, iy     int        // kernAreaFast's block
	xofs, yofs []int      // kernNearest's source columns and rows
	xtab, ytab []decimate // kernArea's tables
	k          int        // kernSeparable's taps: 2 linear, 4 cubic
	xt, yt     []int32
	xc, yc     []int16
}

// newResizer plans window win of an sw×sh image of c channels resized to
// dw×dh exactly as cv2.resize does for 8-bit images.
func newResizer(sw, sh, c, dw, dh, interp int, win window) *resizer {
	r := &resizer{sw: sw, sh: sh, c: c, dw: dw, dh: dh, win: win}
	if dw == sw && dh == sh {
		r.kernel = kernCopy
		return r
	}
	// OpenCV derives the scale as 1/(dsize/ssize).
	invx, invy := float64(dw)/float64(sw), float64(dh)/float64(sh)
	sx, sy := 1/invx, 1/invy
	switch {
	case interp == interNearest:
		r.kernel = kernNearest
		r.xofs, r.yofs = nearestTable(sw, win.x0, win.w, invx), nearestTable(sh, win.y0, win.h, invy)
		return r
	case interp == interArea && sx >= 1 && sy >= 1:
		ix, iy := int(math.RoundToEven(sx)), int(math.RoundToEven(sy))
		if math.Abs(sx-float64(ix)) < 2.220446049250313e-16 && math.Abs(sy-float64(iy)) < 2.220446049250313e-16 &&
			sw >= dw*ix && sh >= dh*iy {
			r.kernel, r.ix, r.iy = kernAreaFast, ix, iy
			return r
		}
		r.kernel = kernArea
		r.xtab = areaTable(sw, dw, sx, win.x0, win.x0+win.w)
		r.ytab = areaTable(sh, dh, sy, win.y0, win.y0+win.h)
		return r
	}
	r.kernel, r.k = kernSeparable, 2
	if interp == interCubic {
		r.k = 4
	}
	area := interp == interArea
	r.xt, r.xc = axisTable(sw, win.x0, win.w, sx, invx, r.k, area, true)
	r.yt, r.yc = axisTable(sh, win.y0, win.h, sy, invy, r.k, area, false)
	return r
}

// run writes the window into dst (packed, win.w*win.h*c bytes) from src,
// of which only the columns and rows that reads lists need be filled.
func (r *resizer) run(src pixels, dst []uint8) {
	win := r.win
	switch r.kernel {
	case kernCopy:
		c := src.c
		for y := 0; y < win.h; y++ {
			s := ((win.y0+y)*src.w + win.x0) * c
			copy(dst[y*win.w*c:(y+1)*win.w*c], src.pix[s:s+win.w*c])
		}
	case kernNearest:
		resizeNearest(src, r.xofs, r.yofs, win, dst)
	case kernAreaFast:
		resizeAreaFast(src, r.ix, r.iy, win, dst)
	case kernArea:
		resizeArea(src, r.xtab, r.ytab, win, dst)
	default:
		separable(src, r.k, r.xt, r.xc, r.yt, r.yc, win, r.dw*src.c, dst)
	}
}

// reads lists, ascending, the source columns and rows run reads.
func (r *resizer) reads() (cols, rows []int32) {
	win := r.win
	span := func(lo, n int) func(mark func(int)) {
		return func(mark func(int)) {
			for i := lo; i < lo+n; i++ {
				mark(i)
			}
		}
	}
	var xs, ys func(mark func(int))
	switch r.kernel {
	case kernCopy:
		xs, ys = span(win.x0, win.w), span(win.y0, win.h)
	case kernNearest:
		xs, ys = each(r.xofs), each(r.yofs)
	case kernAreaFast:
		xs, ys = span(win.x0*r.ix, win.w*r.ix), span(win.y0*r.iy, win.h*r.iy)
	case kernArea:
		xs, ys = eachTerm(r.xtab), eachTerm(r.ytab)
	default:
		xs, ys = each(r.xt), each(r.yt)
	}
	return marked(r.sw, xs), marked(r.sh, ys)
}

func each[T int | int32](v []T) func(mark func(int)) {
	return func(mark func(int)) {
		for _, i := range v {
			mark(int(i))
		}
	}
}

func eachTerm(tab []decimate) func(mark func(int)) {
	return func(mark func(int)) {
		for _, t := range tab {
			mark(t.si)
		}
	}
}

// marked is the sorted set of the indices in [0, n) that walk marks.
func marked(n int, walk func(mark func(int))) []int32 {
	seen := tensor.MakeSlice[uint8](n)[:n]
	defer tensor.PutSlice(seen)
	clear(seen)
	count := 0
	walk(func(i int) {
		if seen[i] == 0 {
			seen[i] = 1
			count++
		}
	})
	out := make([]int32, 0, count)
	for i, v := range seen {
		if v != 0 {
			out = append(out, int32(i))
		}
	}
	return out
}

// axisTable returns, for n outputs from start, the k source taps (clamped
// to [0, size)) and their 11-bit coefficients, by OpenCV's rules: half-pixel
// centres; linear (not cubic) clamps a horizontal position outside the
// image to its edge pixel; area_mode (INTER_AREA enlarging) has its own
// fraction.
func axisTable(size, start, n int, scale, inv float64, k int, area, isX bool) ([]int32, []int16) {
	taps := make([]int32, n*k)
	coef := make([]int16, n*k)
	var cbuf [4]float32
	for i := range n {
		d := start + i
		var s int
		var f float32
		if area {
			s = int(math.Floor(float64(d) * scale))
			f = float32(float64(d+1) - float64(s+1)*inv)
			if f <= 0 {
				f = 0
			} else {
				f -= float32(math.Floor(float64(f)))
			}
		} else {
			f = float32((float64(d)+0.5)*scale - 0.5)
			s = int(math.Floor(float64(f)))
			f -= float32(s)
		}
		if k == 2 {
			if isX && s < 0 {
				f, s = 0, 0
			}
			if isX && s >= size-1 {
				f, s = 0, size-1
			}
			cbuf[0], cbuf[1] = 1-f, f
		} else {
			cubicCoeffs(f, &cbuf)
		}
		first := s - (k/2 - 1)
		for j := range k {
			taps[i*k+j] = int32(min(max(first+j, 0), size-1))
			coef[i*k+j] = int16(math.RoundToEven(float64(cbuf[j] * coefScale)))
		}
	}
	return taps, coef
}

// cubicCoeffs is OpenCV's interpolateCubic (A = -0.75), in float32.
func cubicCoeffs(x float32, c *[4]float32) {
	const a = float32(-0.75)
	c[0] = ((a*(x+1)-5*a)*(x+1)+8*a)*(x+1) - 4*a
	c[1] = ((a+2)*x-(a+3))*x*x + 1
	c[2] = ((a+2)*(1-x)-(a+3))*(1-x)*(1-x) + 1
	c[3] = 1 - c[0] - c[1] - c[2]
}

// separable runs the horizontal pass into 32-bit rows (cached, each source
// row computed once) and the vertical pass into dst. fullW is the whole
// output row's length in bytes, on which OpenCV's split between its SIMD
// and scalar vertical kernels (which round differently) depends.
func separable(src pixels, k int, xt []int32, xc []int16, yt []int32, yc []int16, win window, fullW int, dst []uint8) {
	c := src.c
	rw := win.w * c
	store := tensor.MakeSlice[int32](rw * k)
	defer tensor.PutSlice(store)
	rows := make([][]int32, k)
	have := make([]int, k)
	for j := range k {
		rows[j], have[j] = store[j*rw:(j+1)*rw], -1
	}
	need := make([][]int32, k)
	x0 := win.x0 * c
	vecEnd := fullW &^ 15
	if k == 2 {
		for vecEnd < fullW-8 {
			vecEnd += 8
		}
	} else {
		vecEnd = fullW &^ 7
	}
	for y := range win.h {
		taps := yt[y*k : y*k+k]
		for j, sy := range taps {
			need[j] = cachedRow(src, int(sy), taps, rows, have, xt, xc, k)
		}
		out := dst[y*rw : (y+1)*rw]
		if k == 2 {
			verticalLinear(out, need[0], need[1], int32(yc[2*y]), int32(yc[2*y+1]), min(max(vecEnd-x0, 0), rw))
		} else {
			verticalCubic(out, need, yc[4*y:4*y+4], min(max(vecEnd-x0, 0), rw))
		}
	}
}

// cachedRow returns the horizontal pass of source row sy, computing it into
// a buffer that none of taps needs when it is not cached.
func cachedRow(src pixels, sy int, taps []int32, rows [][]int32, have []int, xt []int32, xc []int16, k int) []int32 {
	for j, h := range have {
		if h == sy {
			return rows[j]
		}
	}
	slot := 0
	for j, h := range have {
		used := false
		for _, t := range taps {
			if int(t) == h {
				used = true
			}
		}
		if !used {
			slot = j
			break
		}
	}
	have[slot] = sy
	s := src.pix[sy*src.w*src.c : (sy+1)*src.w*src.c]
	if k == 2 {
		horizontalLinear(rows[slot], s, xt, xc, src.c)
	} else {
		horizontalCubic(rows[slot], s, xt, xc, src.c)
	}
	return rows[slot]
}

func horizontalLinear(d []int32, s []uint8, xt []int32, xc []int16, c int) {
	if c == 1 {
		for i := range d {
			a0, a1 := int32(xc[2*i]), int32(xc[2*i+1])
			d[i] = int32(s[xt[2*i]])*a0 + int32(s[xt[2*i+1]])*a1
		}
		return
	}
	n := len(d) / 3
	for i := range n {
		a0, a1 := int32(xc[2*i]), int32(xc[2*i+1])
		p := s[3*xt[2*i] : 3*xt[2*i]+3 : 3*xt[2*i]+3]
		q := s[3*xt[2*i+1] : 3*xt[2*i+1]+3 : 3*xt[2*i+1]+3]
		o := d[3*i : 3*i+3 : 3*i+3]
		o[0] = int32(p[0])*a0 + int32(q[0])*a1
		o[1] = int32(p[1])*a0 + int32(q[1])*a1
		o[2] = int32(p[2])*a0 + int32(q[2])*a1
	}
}

func horizontalCubic(d []int32, s []uint8, xt []int32, xc []int16, c int) {
	n := len(d) / c
	for i := range n {
		t := xt[4*i : 4*i+4 : 4*i+4]
		a := xc[4*i : 4*i+4 : 4*i+4]
		for ch := range c {
			d[i*c+ch] = int32(s[int(t[0])*c+ch])*int32(a[0]) + int32(s[int(t[1])*c+ch])*int32(a[1]) +
				int32(s[int(t[2])*c+ch])*int32(a[2]) + int32(s[int(t[3])*c+ch])*int32(a[3])
		}
	}
}

func sat8(v int32) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// verticalLinear is VResizeLinear for 8 bits: OpenCV's SIMD kernel (each
// term pre-shifted by 4 and kept by its high 16 bits) for the first vecEnd
// bytes, its scalar rounding after them.
func verticalLinear(out []uint8, r0, r1 []int32, b0, b1 int32, vecEnd int) {
	r0, r1 = r0[:len(out)], r1[:len(out)]
	for x := 0; x < vecEnd; x++ {
		v := ((r0[x]>>4)*b0)>>16 + ((r1[x]>>4)*b1)>>16
		out[x] = sat8((v + 2) >> 2)
	}
	for x := vecEnd; x < len(out); x++ {
		out[x] = sat8((r0[x]*b0 + r1[x]*b1 + 1<<21) >> 22)
	}
}

// verticalCubic is VResizeCubic for 8 bits: float32 (SIMD) for the first
// vecEnd bytes, 64-bit integers (scalar) after.
func verticalCubic(out []uint8, r [][]int32, b []int16, vecEnd int) {
	const sc = float32(1.0 / (coefScale * coefScale))
	f0, f1, f2, f3 := float32(b[0])*sc, float32(b[1])*sc, float32(b[2])*sc, float32(b[3])*sc
	r0, r1, r2, r3 := r[0][:len(out)], r[1][:len(out)], r[2][:len(out)], r[3][:len(out)]
	for x := 0; x < vecEnd; x++ {
		t := float32(float32(r3[x]) * f3)
		t = float32(float32(r2[x])*f2) + t
		t = float32(float32(r1[x])*f1) + t
		t = float32(float32(r0[x])*f0) + t
		out[x] = sat8(int32(max(min(math.RoundToEven(float64(t)), 1e6), -1e6)))
	}
	for x := vecEnd; x < len(out); x++ {
		v := int64(r0[x])*int64(b[0]) + int64(r1[x])*int64(b[1]) + int64(r2[x])*int64(b[2]) + int64(r3[x])*int64(b[3])
		out[x] = sat8(int32(max(min((v+1<<21)>>22, 1000), -1000)))
	}
}

// nearestTable is resizeNN's source index of n outputs from start:
// floor(d*(ssize/dsize)), not half-pixel.
func nearestTable(size, start, n int, inv float64) []int {
	ifx := 1 / inv
	ofs := make([]int, n)
	for i := range ofs {
		ofs[i] = min(int(math.Floor(float64(start+i)*ifx)), size-1)
	}
	return ofs
}

// resizeNearest is resizeNN over the tables of nearestTable.
func resizeNearest(src pixels, xofs, yofs []int, win window, dst []uint8) {
	c := src.c
	for y, sy := range yofs {
		s := src.pix[sy*src.w*c : (sy+1)*src.w*c]
		d := dst[y*win.w*c : (y+1)*win.w*c]
		if c == 1 {
			for i, o := range xofs {
				d[i] = s[o]
			}
			continue
		}
		for i, o := range xofs {
			d[3*i], d[3*i+1], d[3*i+2] = s[3*o], s[3*o+1], s[3*o+2]
		}
	}
}
