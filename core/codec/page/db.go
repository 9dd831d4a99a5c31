package page

import (
	"math"
	"slices"

	"github.com/svc-dev/svc/core/codec/geom"
)

// DB holds DBPostProcess's settings; DefaultDB gives PaddleOCR's.
type DB struct {
	Thresh        float64 // binary map: probability > Thresh (0.3)
	BoxThresh     float64 // a box is kept when its mean probability ≥ BoxThresh (0.6)
	UnclipRatio   float64 // growth: distance = area × UnclipRatio / perimeter (1.5)
	MaxCandidates int     // contours examined, in OpenCV's order (1000)
	MinSize       float64 // a box's shorter side must reach MinSize, MinSize+2 once grown (3)
	Dilate        bool    // 2×2 dilation of the binary map (use_dilation, off)
}

// DefaultDB is PaddleOCR's DBPostProcess configuration for PP-OCR.
var DefaultDB = DB{Thresh: 0.3, BoxThresh: 0.6, UnclipRatio: 1.5, MaxCandidates: 1000, MinSize: 3}

// Quad is a text box on the page: four corners in PaddleOCR's order.
type Quad [4]geom.Point

// Box is a detected box with its score, the map's mean under it.
type Box struct {
	Quad  Quad
	Score float64
}

// Boxes is DBPostProcess.boxes_from_bitmap with box_type "quad" and
// score_mode "fast": the boxes of the w×h probability map pred, scaled to
// a destW×destH page, in the order of OpenCV's contours.
func (d DB) Boxes(pred []float32, w, h, destW, destH int) []Box {
	if w <= 0 || h <= 0 || len(pred) < w*h {
		return nil
	}
	thresh := float32(d.Thresh)
	bin := make([]uint8, w*h)
	for i, v := range pred[:w*h] {
		if v > thresh {
			bin[i] = 255
		}
	}
	if d.Dilate {
		bin = dilate2x2(bin, w, h)
	}
	contours := geom.FindContours(bin, w, h)
	if len(contours) > d.MaxCandidates {
		contours = contours[:d.MaxCandidates]
	}
	var boxes []Box
	for _, ct := range contours {
		pts, sside := miniBox(ct)
		if float64(sside) < d.MinSize {
			continue
		}
		score := scoreFast(pred, w, h, pts)
		if d.BoxThresh > score {
			continue
		}
		dist := geom.PolygonArea(pts[:]) * d.UnclipRatio / geom.PolygonPerimeter(pts[:])
		grown := geom.OffsetRound(geom.Trunc(pts[:]), dist)
		if len(grown) == 0 {
			continue
		}
		big, sside := miniBox(grown)
		if float64(sside) < d.MinSize+2 {
			continue
		}
		var q Quad
		fw, fh := float32(w), float32(h)
		for k, p := range big {
			q[k] = geom.Point{X: scaleCoord(p.X, fw, destW), Y: scaleCoord(p.Y, fh, destH)}
		}
		boxes = append(boxes, Box{Quad: q, Score: score})
	}
	return boxes
}

// scaleCoord is np.clip(np.round(v / size * dest), 0, dest) in float32.
func scaleCoord(v, size float32, dest int) int {
	s := float32(float32(v/size) * float32(dest))
	r := math.RoundToEven(float64(s))
	return int(min(max(r, 0), float64(dest)))
}

// dilate2x2 is cv2.dilate with a 2×2 kernel of ones: each pixel takes the
// maximum of itself and its left, upper and upper-left neighbours.
func dilate2x2(bin []uint8, w, h int) []uint8 {
	out := make([]uint8, len(bin))
	for y := range h {
		for x := range w {
			v := bin[y*w+x]
			if x > 0 {
				v = max(v, bin[y*w+x-1])
			}
			if y > 0 {
				v = max(v, bin[(y-1)*w+x])
				if x > 0 {
					v = max(v, bin[(y-1)*w+x-1])
				}
			}
			out[y*w+x] = v
		}
	}
	return out
}

// miniBox is get_mini_boxes: the least-area rectangle's corners, sorted
// by x (stable), then taken as PaddleOCR takes them (top-left, top-right,
// bottom-right, bottom-left), and the rectangle's shorter side.
func miniBox(pts []geom.Point) ([4]geom.Point2f, float32) {
	r := geom.MinAreaRect(pts)
	bp := geom.BoxPoints(r)
	s := bp[:]
	slices.SortStableFunc(s, func(a, b geom.Point2f) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	i1, i4 := 1, 0
	if s[1].Y > s[0].Y {
		i1, i4 = 0, 1
	}
	i2, i3 := 3, 2
	if s[3].Y > s[2].Y {
		i2, i3 = 2, 3
	}
	return [4]geom.Point2f{s[i1], s[i2], s[i3], s[i4]}, min(r.Width, r.Height)
}

// scoreFast is box_score_fast: the mean of pred under the box, filled as
// cv2.fillPoly fills it over the box's bounding window, summed as
// cv2.mean sums (float64, row by row) and scales (by 1/count).
func scoreFast(pred []float32, w, h int, box [4]geom.Point2f) float64 {
	minX, maxX, minY, maxY := box[0].X, box[0].X, box[0].Y, box[0].Y
	for _, p := range box[1:] {
		minX, maxX = min(minX, p.X), max(maxX, p.X)
		minY, maxY = min(minY, p.Y), max(maxY, p.Y)
	}
	clip := func(v float32, hi int) int {
		return min(max(int(int32(v)), 0), hi-1)
	}
	xmin := clip(float32(math.Floor(float64(minX))), w)
	xmax := clip(float32(math.Ceil(float64(maxX))), w)
	ymin := clip(float32(math.Floor(float64(minY))), h)
	ymax := clip(float32(math.Ceil(float64(maxY))), h)
	mw, mh := xmax-xmin+1, ymax-ymin+1
	mask := make([]uint8, mw*mh)
	var poly [4]geom.Point
	for i, p := range box {
		poly[i] = geom.Point{X: int(p.X - float32(xmin)), Y: int(p.Y - float32(ymin))}
	}
	geom.FillPoly(mask, mw, mh, poly[:], 1)
	sum, n := 0.0, 0
	for y := range mh {
		row := pred[(ymin+y)*w+xmin : (ymin+y)*w+xmax+1]
		for x, m := range mask[y*mw : y*mw+mw] {
			if m != 0 {
				sum += float64(row[x])
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum * (1 / float64(n)) // cv::mean scales by the reciprocal
}
