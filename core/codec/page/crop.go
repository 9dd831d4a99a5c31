package page

import (
	"math"

	"github.com/svc-dev/svc/core/codec/geom"
)

// Image is an 8-bit picture: W×H pixels of C interleaved channels.
type Image struct {
	Pix     []uint8
	W, H, C int
}

// Crop is get_rotate_crop_image: the quadrilateral q of img warped to an
// upright rectangle as wide as its longer horizontal side and as tall as
// its longer vertical side (cv2.getPerspectiveTransform, then
// cv2.warpPerspective with INTER_CUBIC and BORDER_REPLICATE, in OpenCV's
// fixed point), turned a quarter counter-clockwise (np.rot90) when its
// height is at least 1.5 times its width. A box with a side under one
// pixel gives an empty image.
func Crop(img Image, q Quad) Image {
	var p [4]geom.Point2f
	for i, c := range q {
		p[i] = geom.Point2f{X: float32(c.X), Y: float32(c.Y)}
	}
	cw := int(max(norm32(p[0], p[1]), norm32(p[2], p[3])))
	ch := int(max(norm32(p[0], p[3]), norm32(p[1], p[2])))
	if cw <= 0 || ch <= 0 {
		return Image{C: img.C}
	}
	dst := [4]geom.Point2f{{X: 0, Y: 0}, {X: float32(cw), Y: 0}, {X: float32(cw), Y: float32(ch)}, {X: 0, Y: float32(ch)}}
	m, ok := perspectiveTransform(p, dst)
	if !ok {
		return Image{C: img.C}
	}
	inv, ok := invert3(m)
	if !ok {
		return Image{C: img.C}
	}
	out := warpCubicReplicate(img, inv, cw, ch)
	if float64(ch)*1.0/float64(cw) >= 1.5 {
		out = rot90(out)
	}
	return out
}

// norm32 is np.linalg.norm of a float32 difference.
func norm32(a, b geom.Point2f) float32 {
	dx, dy := a.X-b.X, a.Y-b.Y
	return float32(math.Sqrt(float64(float32(dx*dx) + float32(dy*dy))))
}

// rot90 is np.rot90: a quarter turn counter-clockwise.
func rot90(img Image) Image {
	out := Image{Pix: make([]uint8, len(img.Pix)), W: img.H, H: img.W, C: img.C}
	for i := range out.H {
		for j := range out.W {
			// out[i][j] = in[j][W-1-i]
			copy(out.Pix[(i*out.W+j)*img.C:][:img.C], img.Pix[(j*img.W+img.W-1-i)*img.C:][:img.C])
		}
	}
	return out
}

// perspectiveTransform is cv::getPerspectiveTransform: the 8×8 system
// solved by LU with partial pivoting (DECOMP_LU), in float64.
func perspectiveTransform(src, dst [4]geom.Point2f) ([9]float64, bool) {
	var a [8][8]float64
	var b [8]float64
	for i := range 4 {
		a[i][0], a[i+4][3] = float64(src[i].X), float64(src[i].X)
		a[i][1], a[i+4][4] = float64(src[i].Y), float64(src[i].Y)
		a[i][2], a[i+4][5] = 1, 1
		a[i][6] = float64(float32(-src[i].X * dst[i].X))
		a[i][7] = float64(float32(-src[i].Y * dst[i].X))
		a[i+4][6] = float64(float32(-src[i].X * dst[i].Y))
		a[i+4][7] = float64(float32(-src[i].Y * dst[i].Y))
		b[i] = float64(dst[i].X)
		b[i+4] = float64(dst[i].Y)
	}
	const m = 8
	eps := 2.220446049250313e-16 * 100 // DBL_EPSILON*100, as hal::LU64f takes it
	for i := range m {
		k := i
		for j := i + 1; j < m; j++ {
			if math.Abs(a[j][i]) > math.Abs(a[k][i]) {
				k = j
			}
		}
		if math.Abs(a[k][i]) < eps {
			return [9]float64{}, false
		}
		if k != i {
			for j := i; j < m; j++ {
				a[i][j], a[k][j] = a[k][j], a[i][j]
			}
			b[i], b[k] = b[k], b[i]
		}
		d := -1 / a[i][i]
		for j := i + 1; j < m; j++ {
			alpha := a[j][i] * d
			for k := i + 1; k < m; k++ {
				a[j][k] += m64(alpha, a[i][k])
			}
			b[j] += m64(alpha, b[i])
		}
	}
	for i := m - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < m; k++ {
			s -= m64(a[i][k], b[k])
		}
		b[i] = s / a[i][i]
	}
	var out [9]float64
	copy(out[:8], b[:])
	out[8] = 1
	return out, true
}

// m64 is a float64 product the compiler may not fuse with an addition.
func m64(a, b float64) float64 { return float64(a * b) }

// invert3 is cv::invert of a 3×3 float64 matrix (DECOMP_LU takes the
// closed form for 3×3).
func invert3(s [9]float64) ([9]float64, bool) {
	at := func(r, c int) float64 { return s[r*3+c] }
	d := at(0, 0)*(m64(at(1, 1), at(2, 2))-m64(at(1, 2), at(2, 1))) -
		at(0, 1)*(m64(at(1, 0), at(2, 2))-m64(at(1, 2), at(2, 0))) +
		at(0, 2)*(m64(at(1, 0), at(2, 1))-m64(at(1, 1), at(2, 0)))
	if d == 0 {
		return [9]float64{}, false
	}
	d = 1 / d
	var t [9]float64
	t[0] = (m64(at(1, 1), at(2, 2)) - m64(at(1, 2), at(2, 1))) * d
	t[1] = (m64(at(0, 2), at(2, 1)) - m64(at(0, 1), at(2, 2))) * d
	t[2] = (m64(at(0, 1), at(1, 2)) - m64(at(0, 2), at(1, 1))) * d
	t[3] = (m64(at(1, 2), at(2, 0)) - m64(at(1, 0), at(2, 2))) * d
	t[4] = (m64(at(0, 0), at(2, 2)) - m64(at(0, 2), at(2, 0))) * d
	t[5] = (m64(at(0, 2), at(1, 0)) - m64(at(0, 0), at(1, 2))) * d
	t[6] = (m64(at(1, 0), at(2, 1)) - m64(at(1, 1), at(2, 0))) * d
	t[7] = (m64(at(0, 1), at(2, 0)) - m64(at(0, 0), at(2, 1))) * d
	t[8] = (m64(at(0, 0), at(1, 1)) - m64(at(0, 1), at(1, 0))) * d
	return t, true
}
