package geom

import "math"

// Clipper's constants (clipper.cpp 6.4.2, as pyclipper builds it).
const (
	clipperPi        = 3.141592653589793238
	clipperTwoPi     = clipperPi * 2
	defArcTolerance  = 0.25
	clipperTolerance = 1.0e-20
)

// clipperRound is Clipper's Round: half away from zero.
func clipperRound(v float64) int {
	if v < 0 {
		return int(v - 0.5)
	}
	return int(v + 0.5)
}

// Trunc converts float32 points to integers as pyclipper does when it is
// given floats: toward zero.
func Trunc(pts []Point2f) []Point {
	out := make([]Point, len(pts))
	for i, p := range pts {
		out[i] = Point{int(p.X), int(p.Y)}
	}
	return out
}

// PolygonArea is the area of a closed polygon by the shoelace formula in
// float64, summed in the order shapely's Polygon.area sums it.
func PolygonArea(pts []Point2f) float64 {
	n := len(pts)
	if n < 3 {
		return 0
	}
	// GEOS's signed area: x relative to the first point, times the
	// difference of the neighbours' y.
	x0 := float64(pts[0].X)
	sum := 0.0
	for i := 1; i < n; i++ {
		x := float64(pts[i].X) - x0
		y1 := float64(pts[(i+1)%n].Y)
		y2 := float64(pts[i-1].Y)
		sum += m64(x, y2-y1)
	}
	return math.Abs(sum / 2)
}

// PolygonPerimeter is the length of a closed polygon's boundary.
func PolygonPerimeter(pts []Point2f) float64 {
	sum := 0.0
	for i, p := range pts {
		q := pts[(i+1)%len(pts)]
		dx, dy := float64(q.X)-float64(p.X), float64(q.Y)-float64(p.Y)
		sum += math.Sqrt(m64(dx, dx) + m64(dy, dy))
	}
	return sum
}

// clipperArea is Clipper's Area(Path): positive for its orientation.
func clipperArea(p []Point) float64 {
	n := len(p)
	if n < 3 {
		return 0
	}
	a := 0.0
	for i, j := 0, n-1; i < n; i++ {
		a += m64(float64(p[j].X)+float64(p[i].X), float64(p[j].Y)-float64(p[i].Y))
		j = i
	}
	return -a * 0.5
}

type dpoint struct{ X, Y float64 }

func unitNormal(a, b Point) dpoint {
	if a == b {
		return dpoint{}
	}
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	f := 1 * 1.0 / math.Sqrt(m64(dx, dx)+m64(dy, dy))
	dx *= f
	dy *= f
	return dpoint{dy, -dx}
}

// OffsetRound grows a closed polygon by delta with round joins, as
// pyclipper.PyclipperOffset (miter limit 2, arc tolerance 0.25) with
// AddPath(path, JT_ROUND, ET_CLOSEDPOLYGON) and Execute(delta) does for a
// simple polygon and delta > 0: Clipper's offset path, then what its union
// makes of a path that does not cross itself (repeated and collinear
// vertices removed, positive orientation, starting after the topmost
// vertex). It returns nil for a path Clipper drops (fewer than three
// distinct vertices). The union itself (Vatti's sweep) is not reproduced:
// a path that crosses itself, which a box's offset never is, would differ.
func OffsetRound(path []Point, delta float64) []Point {
	src := clipperPath(path)
	if src == nil {
		return nil
	}
	if clipperArea(src) < 0 {
		for i, j := 0, len(src)-1; i < j; i, j = i+1, j-1 {
			src[i], src[j] = src[j], src[i]
		}
	}
	if delta > -clipperTolerance && delta < clipperTolerance {
		return cleanPath(src)
	}
	o := offsetter{src: src, delta: delta}
	o.setSteps()
	n := len(src)
	o.normals = make([]dpoint, n)
	for j := 0; j < n-1; j++ {
		o.normals[j] = unitNormal(src[j], src[j+1])
	}
	o.normals[n-1] = unitNormal(src[n-1], src[0])
	k := n - 1
	for j := range n {
		k = o.offsetPoint(j, k)
	}
	return clipperStart(cleanPath(o.dest))
}

// clipperStart rotates a path to begin where Clipper's union output of a
// simple path begins: at the vertex that follows its topmost vertex (least
// y; of those, greatest x) in the path's direction.
func clipperStart(p []Point) []Point {
	n := len(p)
	if n == 0 {
		return p
	}
	top := p[0].Y
	for _, q := range p {
		top = min(top, q.Y)
	}
	last := -1
	for i, q := range p {
		if q.Y == top && (last < 0 || q.X > p[last].X) {
			last = i
		}
	}
	s := (last + 1) % n
	return append(p[s:n:n], p[:s]...)
}

// clipperPath is ClipperOffset.AddPath's clean-up: the closing repeat and
// consecutive repeats removed.
func clipperPath(path []Point) []Point {
	hi := len(path) - 1
	if hi < 0 {
		return nil
	}
	for hi > 0 && path[0] == path[hi] {
		hi--
	}
	out := []Point{path[0]}
	for i := 1; i <= hi; i++ {
		if out[len(out)-1] != path[i] {
			out = append(out, path[i])
		}
	}
	if len(out) < 3 {
		return nil
	}
	return out
}

type offsetter struct {
	src, dest        []Point
	normals          []dpoint
	delta            float64
	sin, cos, perRad float64
	sinA             float64
}

func (o *offsetter) setSteps() {
	ad := math.Abs(o.delta)
	y := 0.25
	if y > ad*defArcTolerance {
		y = ad * defArcTolerance
	}
	steps := clipperPi / math.Acos(1-y/ad)
	if steps > ad*clipperPi {
		steps = ad * clipperPi
	}
	o.sin = math.Sin(clipperTwoPi / steps)
	o.cos = math.Cos(clipperTwoPi / steps)
	o.perRad = steps / clipperTwoPi
	if o.delta < 0 {
		o.sin = -o.sin
	}
}

func (o *offsetter) push(j int, n dpoint) {
	o.dest = append(o.dest, Point{clipperRound(float64(o.src[j].X) + m64(n.X, o.delta)), clipperRound(float64(o.src[j].Y) + m64(n.Y, o.delta))})
}

// offsetPoint is ClipperOffset::OffsetPoint for round joins; it returns
// the new k.
func (o *offsetter) offsetPoint(j, k int) int {
	nk, nj := o.normals[k], o.normals[j]
	o.sinA = m64(nk.X, nj.Y) - m64(nj.X, nk.Y)
	if math.Abs(o.sinA*o.delta) < 1.0 {
		if m64(nk.X, nj.X)+m64(nj.Y, nk.Y) > 0 {
			o.push(j, nk)
			return k
		}
	} else if o.sinA > 1.0 {
		o.sinA = 1.0
	} else if o.sinA < -1.0 {
		o.sinA = -1.0
	}
	if o.sinA*o.delta < 0 {
		o.push(j, nk)
		o.dest = append(o.dest, o.src[j])
		o.push(j, nj)
	} else {
		o.doRound(j, k)
	}
	return j
}

func (o *offsetter) doRound(j, k int) {
	nk, nj := o.normals[k], o.normals[j]
	a := math.Atan2(o.sinA, m64(nk.X, nj.X)+m64(nk.Y, nj.Y))
	steps := max(int(clipperRound(o.perRad*math.Abs(a))), 1)
	x, y := nk.X, nk.Y
	for range steps {
		o.dest = append(o.dest, Point{clipperRound(float64(o.src[j].X) + m64(x, o.delta)), clipperRound(float64(o.src[j].Y) + m64(y, o.delta))})
		x2 := x
		x = m64(x, o.cos) - m64(o.sin, y)
		y = m64(x2, o.sin) + m64(y, o.cos)
	}
	o.push(j, nj)
}

// cleanPath removes repeated vertices and vertices on the line through
// their neighbours, cyclically, as Clipper's union leaves a simple path.
func cleanPath(p []Point) []Point {
	out := append([]Point(nil), p...)
	for changed := true; changed && len(out) >= 3; {
		changed = false
		for i := 0; i < len(out) && len(out) >= 3; i++ {
			a, b, c := out[(i+len(out)-1)%len(out)], out[i], out[(i+1)%len(out)]
			cross := int64(b.X-a.X)*int64(c.Y-b.Y) - int64(b.Y-a.Y)*int64(c.X-b.X)
			if b == a || b == c || cross == 0 {
				out = append(out[:i], out[i+1:]...)
				changed = true
				i--
			}
		}
	}
	if len(out) < 3 {
		return nil
	}
	return out
}

// m64 is a float64 product the compiler may not fuse with an addition.
func m64(a, b float64) float64 { return float64(a * b) }
