package detect

import (
	"fmt"
	"math"

	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

// protoMasks are a segment head's prototype masks [N, masks, h, w].
type protoMasks struct {
	masks, h, w int
	data        []float32
}

// readProtos checks and reads the prototype masks of a batch of n.
func readProtos(t *tensor.Tensor, masks, n int) (*protoMasks, error) {
	data, err := floats32(t, "prototype masks")
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 4 || t.Shape[0] != int64(n) || t.Shape[1] != int64(masks) || t.Shape[2] < 1 || t.Shape[3] < 1 {
		return nil, fmt.Errorf("prototype masks of shape %s: want [%d, %d, height, width]", tensor.FormatShape(t.Shape), n, masks)
	}
	if err := checkLen(t.Shape, len(data), "prototype masks"); err != nil {
		return nil, err
	}
	return &protoMasks{masks: masks, h: int(t.Shape[2]), w: int(t.Shape[3]), data: data}, nil
}

// maskSpace computes one item's masks: Ultralytics' process_mask
// (coefficients × prototypes, sigmoid, cropped to the box, upsampled
// bilinearly to the input's size, over 0.5) over the part of the input the
// box can reach, its outer contour mapped onto the picture as
// scale_coords maps Masks.xy, and on request the mask on the picture's
// pixels, as scale_image maps it (the letterbox's inside resized to the
// picture, bilinearly).
type maskSpace struct {
	protos []float32 // the item's [masks, h, w]
	masks  int
	ph, pw int
	// W, H are the input's size: the letterbox's.
	W, H int
	f    image.Frame
	rle  bool
}

func newMaskSpace(pm *protoMasks, i int, f image.Frame, rle bool) *maskSpace {
	n := pm.masks * pm.h * pm.w
	m := &maskSpace{protos: pm.data[i*n : (i+1)*n], masks: pm.masks, ph: pm.h, pw: pm.w, W: f.InputWidth, H: f.InputHeight, f: f, rle: rle}
	if m.W <= 0 || m.H <= 0 {
		// A tensor of unknown size: Ultralytics' prototypes are a
		// quarter of the input.
		m.W, m.H = 4*pm.w, 4*pm.h
	}
	return m
}

// raster is a binary raster of w×h pixels at (x0, y0) of a larger one.
type raster struct {
	x0, y0, w, h int
	pix          []uint8
}

// mask computes the mask of a box (in the input's pixels) with the given
// coefficients; ok is false when it is empty.
func (m *maskSpace) mask(coefs []float32, box [4]float32) ([]Point, *RLE, bool) {
	r := m.upsampled(coefs, box)
	if r == nil {
		return nil, nil, false
	}
	contour := outerContour(r)
	if contour == nil {
		return nil, nil, false
	}
	poly := make([]Point, len(contour))
	for k, p := range contour {
		x, y := toPoint(m.f, float32(p[0]+r.x0), float32(p[1]+r.y0))
		poly[k] = Point{x, y}
	}
	var rle *RLE
	if m.rle {
		rle = m.pictureRLE(r)
	}
	return poly, rle, true
}

// upsampled is the box's mask on the input's pixels, over the part of
// the input that can hold it; nil when empty.
func (m *maskSpace) upsampled(coefs []float32, box [4]float32) *raster {
	rx, ry := float32(float64(m.pw)/float64(m.W)), float32(float64(m.ph)/float64(m.H))
	bx1, by1, bx2, by2 := box[0]*rx, box[1]*ry, box[2]*rx, box[3]*ry
	// crop_mask keeps the prototype pixels c with bx1 <= c < bx2.
	c0, c1 := cropRange(bx1, bx2, m.pw)
	r0, r1 := cropRange(by1, by2, m.ph)
	if c0 >= c1 || r0 >= r1 {
		return nil
	}
	g := &grid{x0: c0, y0: r0, w: c1 - c0, h: r1 - r0}
	g.v = make([]float32, g.w*g.h)
	plane := m.ph * m.pw
	for y := r0; y < r1; y++ {
		for x := c0; x < c1; x++ {
			var s float32
			for k, c := range coefs {
				s += float32(c * m.protos[k*plane+y*m.pw+x])
			}
			g.v[(y-r0)*g.w+x-c0] = sigmoid32(s)
		}
	}
	return g.upsample(m.pw, m.ph, m.W, m.H)
}

// grid is a dense raster of w×h values at (x0, y0) of a larger one, zero
// elsewhere.
type grid struct {
	x0, y0, w, h int
	v            []float32
}

func (g *grid) at(x, y int) float32 {
	x, y = x-g.x0, y-g.y0
	if x < 0 || y < 0 || x >= g.w || y >= g.h {
		return 0
	}
	return g.v[y*g.w+x]
}

// upsample resizes the sw×sh raster that g is part of to dw×dh,
// bilinearly as PyTorch's interpolate (align_corners false), and
// thresholds it at 0.5, over the part of the result g can reach; nil when
// nothing is over 0.5.
func (g *grid) upsample(sw, sh, dw, dh int) *raster {
	sx, sy := float32(sw)/float32(dw), float32(sh)/float32(dh)
	X0, X1 := reach(g.x0, g.x0+g.w, sx, dw)
	Y0, Y1 := reach(g.y0, g.y0+g.h, sy, dh)
	if X0 >= X1 || Y0 >= Y1 {
		return nil
	}
	r := &raster{x0: X0, y0: Y0, w: X1 - X0, h: Y1 - Y0}
	r.pix = make([]uint8, r.w*r.h)
	xs := make([]taps, r.w)
	for X := X0; X < X1; X++ {
		xs[X-X0] = tapsOf(X, sx, sw)
	}
	set := false
	for Y := Y0; Y < Y1; Y++ {
		ty := tapsOf(Y, sy, sh)
		row := r.pix[(Y-Y0)*r.w : (Y-Y0+1)*r.w]
		for i, tx := range xs {
			top := float32(tx.l0*g.at(tx.i0, ty.i0)) + float32(tx.l1*g.at(tx.i1, ty.i0))
			bottom := float32(tx.l0*g.at(tx.i0, ty.i1)) + float32(tx.l1*g.at(tx.i1, ty.i1))
			if float32(top*ty.l0)+float32(bottom*ty.l1) > 0.5 {
				row[i] = 1
				set = true
			}
		}
	}
	if !set {
		return nil
	}
	return r
}

// cropRange is the prototype pixels c of [0, n) with lo <= c < hi.
func cropRange(lo, hi float32, n int) (int, int) {
	a := max(0, int(math.Ceil(float64(lo))))
	b := n
	if c := float64(hi); c <= float64(n) {
		b = max(0, int(math.Ceil(c)))
	}
	if hi != hi || lo != lo {
		return 0, 0
	}
	return min(a, n), b
}

// taps are PyTorch's bilinear source indices and weights (align_corners
// false) for one output index.
type taps struct {
	i0, i1 int
	l0, l1 float32
}

// tapsOf is upsample_bilinear2d's compute_source_index_and_lambda for
// output index d, the scale input/output being s, the input n long.
func tapsOf(d int, s float32, n int) taps {
	src := s*(float32(d)+0.5) - 0.5
	if src < 0 {
		src = 0
	}
	i0 := int(src)
	i1 := i0
	if i0 < n-1 {
		i1++
	}
	l1 := min(max(src-float32(i0), 0), 1)
	return taps{i0: i0, i1: i1, l0: 1 - l1, l1: l1}
}

// reach is the output indices [a, b) of [0, n) whose taps can touch the
// source range [lo, hi) at scale s (input per output).
func reach(lo, hi int, s float32, n int) (int, int) {
	a := int(math.Floor((float64(lo)-1+0.5)/float64(s)-0.5)) - 1
	b := int(math.Ceil((float64(hi)+0.5)/float64(s)-0.5)) + 2
	return max(a, 0), min(b, n)
}

// sigmoid32 is torch's sigmoid in float32.
func sigmoid32(x float32) float32 {
	return float32(1 / (1 + math.Exp(-float64(x))))
}

// pictureRLE is the mask on the picture's pixels: the mask on the resized
// picture (the input's pixels where the picture went, as Ultralytics'
// scale_image crops it) resized to the picture bilinearly and thresholded
// at 0.5, over the part of the picture the mask can reach.
func (m *maskSpace) pictureRLE(r *raster) *RLE {
	f := m.f
	w, h := f.Width, f.Height
	if f.ResizedWidth <= 0 || f.ResizedHeight <= 0 || w <= 0 || h <= 0 {
		return &RLE{Height: max(h, 0), Width: max(w, 0), Counts: []uint32{uint32(max(h, 0) * max(w, 0))}}
	}
	g := &grid{x0: r.x0 - f.PlaceX, y0: r.y0 - f.PlaceY, w: r.w, h: r.h, v: make([]float32, len(r.pix))}
	for i, v := range r.pix {
		g.v[i] = float32(v)
	}
	p := g.upsample(f.ResizedWidth, f.ResizedHeight, w, h)
	if p == nil {
		return &RLE{Height: h, Width: w, Counts: []uint32{uint32(h * w)}}
	}
	return rleOf(p.pix, p.x0, p.y0, p.w, p.h, w, h)
}
