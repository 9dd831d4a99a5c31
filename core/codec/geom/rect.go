package geom

import (
	"math"
)

// MinAreaRect is cv2.minAreaRect on integer points: the convex hull (as
// OpenCV computes it), then rotating calipers in float32 with OpenCV 4.6's
// order of operations, so that the rectangle is OpenCV's to the bit.
func MinAreaRect(pts []Point) RotatedRect {
	idx := ConvexHull(pts, false)
	hull := make([]Point2f, len(idx))
	for i, j := range idx {
		hull[i] = Point2f{float32(pts[j].X), float32(pts[j].Y)}
	}
	var box RotatedRect
	switch n := len(hull); {
	case n > 2:
		out := rotatingCalipers(hull)
		box.Center.X = out[0].X + f32mul(out[1].X+out[2].X, 0.5)
		box.Center.Y = out[0].Y + f32mul(out[1].Y+out[2].Y, 0.5)
		box.Width = float32(math.Sqrt(float64(out[1].X)*float64(out[1].X) + float64(out[1].Y)*float64(out[1].Y)))
		box.Height = float32(math.Sqrt(float64(out[2].X)*float64(out[2].X) + float64(out[2].Y)*float64(out[2].Y)))
		box.Angle = float32(math.Atan2(float64(out[1].Y), float64(out[1].X)))
	case n == 2:
		box.Center.X = f32mul(hull[0].X+hull[1].X, 0.5)
		box.Center.Y = f32mul(hull[0].Y+hull[1].Y, 0.5)
		dx := float64(hull[1].X - hull[0].X)
		dy := float64(hull[1].Y - hull[0].Y)
		box.Width = float32(math.Sqrt(dx*dx + dy*dy))
		box.Angle = float32(math.Atan2(dy, dx))
	case n == 1:
		box.Center = hull[0]
	}
	box.Angle = float32(float64(f32mul(box.Angle, 180)) / math.Pi)
	return box
}

// f32mul is a float32 product that the compiler may not fuse with a
// following addition, as C++ compiles OpenCV's float expressions.
func f32mul(a, b float32) float32 { return float32(a * b) }

// rotatingCalipers is OpenCV's rotatingCalipers in CALIPERS_MINAREARECT
// mode: the corner and the two side vectors of the least-area rectangle.
func rotatingCalipers(points []Point2f) [3]Point2f {
	n := len(points)
	invLen := make([]float32, n)
	vect := make([]Point2f, n)
	left, bottom, right, top := 0, 0, 0, 0
	pt0 := points[0]
	leftX, rightX, topY, bottomY := pt0.X, pt0.X, pt0.Y, pt0.Y
	for i := range n {
		if pt0.X < leftX {
			leftX, left = pt0.X, i
		}
		if pt0.X > rightX {
			rightX, right = pt0.X, i
		}
		if pt0.Y > topY {
			topY, top = pt0.Y, i
		}
		if pt0.Y < bottomY {
			bottomY, bottom = pt0.Y, i
		}
		pt := points[(i+1)%n]
		dx := float64(pt.X - pt0.X)
		dy := float64(pt.Y - pt0.Y)
		vect[i] = Point2f{float32(dx), float32(dy)}
		invLen[i] = float32(1 / math.Sqrt(dx*dx+dy*dy))
		pt0 = pt
	}
	var orientation float32
	ax, ay := float64(vect[n-1].X), float64(vect[n-1].Y)
	for i := range n {
		bx, by := float64(vect[i].X), float64(vect[i].Y)
		if c := ax*by - ay*bx; c != 0 {
			orientation = 1
			if c < 0 {
				orientation = -1
			}
			break
		}
		ax, ay = bx, by
	}
	baseA, baseB := orientation, float32(0)
	seq := [4]int{bottom, right, top, left}
	minArea := float32(math.MaxFloat32)
	var bLeft, bBottom int
	var bA, bB, bWidth, bHeight float32
	for range n {
		// OpenCV 4.6 turns the four edges under the calipers into the
		// first caliper's frame and takes the one furthest clockwise.
		rot := [4]Point2f{
			vect[seq[0]],
			{vect[seq[1]].Y, -vect[seq[1]].X},
			{-vect[seq[2]].X, -vect[seq[2]].Y},
			{-vect[seq[3]].Y, vect[seq[3]].X},
		}
		main := 0
		for i := 1; i < 4; i++ {
			if isRightOf(rot[i], rot[main]) {
				main = i
			}
		}
		p := seq[main]
		leadX, leadY := f32mul(vect[p].X, invLen[p]), f32mul(vect[p].Y, invLen[p])
		switch main {
		case 0:
			baseA, baseB = leadX, leadY
		case 1:
			baseA, baseB = leadY, -leadX
		case 2:
			baseA, baseB = -leadX, -leadY
		case 3:
			baseA, baseB = -leadY, leadX
		}
		seq[main]++
		if seq[main] == n {
			seq[main] = 0
		}
		dx := points[seq[1]].X - points[seq[3]].X
		dy := points[seq[1]].Y - points[seq[3]].Y
		width := f32mul(dx, baseA) + f32mul(dy, baseB)
		dx = points[seq[2]].X - points[seq[0]].X
		dy = points[seq[2]].Y - points[seq[0]].Y
		height := f32mul(-dx, baseB) + f32mul(dy, baseA)
		if area := f32mul(width, height); area <= minArea {
			minArea = area
			bLeft, bA, bWidth, bB, bHeight, bBottom = seq[3], baseA, width, baseB, height, seq[0]
		}
	}
	A1, B1 := bA, bB
	A2, B2 := -bB, bA
	C1 := f32mul(A1, points[bLeft].X) + f32mul(points[bLeft].Y, B1)
	C2 := f32mul(A2, points[bBottom].X) + f32mul(points[bBottom].Y, B2)
	idet := 1 / (f32mul(A1, B2) - f32mul(A2, B1))
	px := f32mul(f32mul(C1, B2)-f32mul(C2, B1), idet)
	py := f32mul(f32mul(A1, C2)-f32mul(A2, C1), idet)
	return [3]Point2f{{px, py}, {f32mul(A1, bWidth), f32mul(B1, bWidth)}, {f32mul(A2, bHeight), f32mul(B2, bHeight)}}
}

// isRightOf is OpenCV's firstVecIsRight: whether v1 is clockwise of v2.
func isRightOf(v1, v2 Point2f) bool {
	return f32mul(v1.Y, v2.X)+f32mul(-v1.X, v2.Y) < 0
}

// BoxPoints is cv2.boxPoints: the rectangle's corners, in OpenCV's order.
func BoxPoints(r RotatedRect) [4]Point2f {
	angle := float64(r.Angle) * math.Pi / 180
	b := f32mul(float32(math.Cos(angle)), 0.5)
	a := f32mul(float32(math.Sin(angle)), 0.5)
	var pt [4]Point2f
	pt[0].X = r.Center.X - f32mul(a, r.Height) - f32mul(b, r.Width)
	pt[0].Y = r.Center.Y + f32mul(b, r.Height) - f32mul(a, r.Width)
	pt[1].X = r.Center.X + f32mul(a, r.Height) - f32mul(b, r.Width)
	pt[1].Y = r.Center.Y - f32mul(b, r.Height) - f32mul(a, r.Width)
	pt[2].X = f32mul(2, r.Center.X) - pt[0].X
	pt[2].Y = f32mul(2, r.Center.Y) - pt[0].Y
	pt[3].X = f32mul(2, r.Center.X) - pt[1].X
	pt[3].Y = f32mul(2, r.Center.Y) - pt[1].Y
	return pt
}
