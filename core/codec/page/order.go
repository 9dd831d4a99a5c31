package page

import (
	"math"
	"slices"

	"github.com/svc-dev/svc/core/codec/geom"
)

// Filter is TextDetector.filter_tag_det_res: each box's corners ordered
// clockwise from the top-left (order_points_clockwise), clipped to the
// w×h page (clip_det_res), and the box dropped when a side is 3 pixels or
// less.
func Filter(boxes []Box, w, h int) []Box {
	out := make([]Box, 0, len(boxes))
	for _, b := range boxes {
		q := orderClockwise(b.Quad)
		for i := range q {
			q[i].X = min(max(q[i].X, 0), w-1)
			q[i].Y = min(max(q[i].Y, 0), h-1)
		}
		if side(q[0], q[1]) <= 3 || side(q[0], q[3]) <= 3 {
			continue
		}
		out = append(out, Box{Quad: q, Score: b.Score})
	}
	return out
}

// side is int(np.linalg.norm(a - b)) on float32 corners.
func side(a, b geom.Point) int {
	dx, dy := float32(a.X-b.X), float32(a.Y-b.Y)
	return int(float32(math.Sqrt(float64(float32(dx*dx) + float32(dy*dy)))))
}

// orderClockwise is order_points_clockwise: the corner of least x+y
// first, of greatest x+y third, of the other two the one of least y−x
// second and of greatest y−x fourth (first index on ties, as np.argmin).
func orderClockwise(p Quad) Quad {
	argmin := func(v []int) int { return slices.Index(v, slices.Min(v)) }
	argmax := func(v []int) int { return slices.Index(v, slices.Max(v)) }
	s := make([]int, 4)
	for i, c := range p {
		s[i] = c.X + c.Y
	}
	lo, hi := argmin(s), argmax(s)
	var q Quad
	q[0], q[2] = p[lo], p[hi]
	var rest []geom.Point
	for i, c := range p {
		if i != lo && i != hi {
			rest = append(rest, c)
		}
	}
	diff := make([]int, len(rest))
	for i, c := range rest {
		diff[i] = c.Y - c.X
	}
	q[1], q[3] = rest[argmin(diff)], rest[argmax(diff)]
	return q
}

// Sort is PaddleOCR's sorted_boxes: by the first corner's y then x, then
// a box moves before the one above it when their first corners are less
// than 10 pixels apart vertically and it is further left.
func Sort(boxes []Box) {
	slices.SortStableFunc(boxes, func(a, b Box) int {
		if c := a.Quad[0].Y - b.Quad[0].Y; c != 0 {
			return c
		}
		return a.Quad[0].X - b.Quad[0].X
	})
	for i := 0; i < len(boxes)-1; i++ {
		for j := i; j >= 0; j-- {
			a, b := boxes[j].Quad[0], boxes[j+1].Quad[0]
			if abs(b.Y-a.Y) < 10 && b.X < a.X {
				boxes[j], boxes[j+1] = boxes[j+1], boxes[j]
			} else {
				break
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// LimitType is DetResizeForTest's limit_type.
type LimitType string

// The limit types: the longer side at most the limit, the shorter side at
// least the limit, the longer side exactly the limit.
const (
	LimitMax        LimitType = "max"
	LimitMin        LimitType = "min"
	LimitResizeLong LimitType = "resize_long"
)

// DetectorSize is DetResizeForTest.resize_image_type0: the detector's
// input size for an h×w page, each side scaled by the limit's ratio,
// truncated, then rounded to a multiple of 32 (half to even, at least
// 32).
func DetectorSize(h, w, limit int, typ LimitType) (rh, rw int) {
	ratio := 1.0
	switch typ {
	case LimitMin:
		if min(h, w) < limit {
			if h < w {
				ratio = float64(limit) / float64(h)
			} else {
				ratio = float64(limit) / float64(w)
			}
		}
	case LimitResizeLong:
		ratio = float64(limit) / float64(max(h, w))
	default:
		if max(h, w) > limit {
			if h > w {
				ratio = float64(limit) / float64(h)
			} else {
				ratio = float64(limit) / float64(w)
			}
		}
	}
	round32 := func(v int) int {
		return max(int(math.RoundToEven(float64(v)/32))*32, 32)
	}
	return round32(int(float64(h) * ratio)), round32(int(float64(w) * ratio))
}
