package geom

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

const python = "/usr/bin/python3"

// shapeMap draws a w×h binary map of the given kind from seed: the shapes
// a text detector's thresholded map holds and the ones that break border
// followers.
func shapeMap(kind string, w, h int, seed uint64) []uint8 {
	r := rand.New(rand.NewPCG(seed, 11))
	m := make([]uint8, w*h)
	set := func(x, y int) {
		if x >= 0 && y >= 0 && x < w && y < h {
			m[y*w+x] = 255
		}
	}
	fw, fh := float64(w), float64(h)
	rotRect := func(cx, cy, a, b, th float64, v uint8) {
		c, s := math.Cos(th), math.Sin(th)
		for y := range h {
			for x := range w {
				dx, dy := float64(x)-cx, float64(y)-cy
				if u, t := dx*c+dy*s, -dx*s+dy*c; math.Abs(u) <= a && math.Abs(t) <= b {
					m[y*w+x] = v
				}
			}
		}
	}
	ellipse := func(cx, cy, a, b float64, v uint8) {
		for y := range h {
			for x := range w {
				dx, dy := (float64(x)-cx)/a, (float64(y)-cy)/b
				if dx*dx+dy*dy <= 1 {
					m[y*w+x] = v
				}
			}
		}
	}
	switch kind {
	case "blobs":
		for range 3 + r.IntN(8) {
			ellipse(r.Float64()*fw, r.Float64()*fh, 0.5+r.Float64()*fw/6, 0.5+r.Float64()*fh/6, 255)
		}
	case "rects":
		for range 2 + r.IntN(6) {
			rotRect(r.Float64()*fw, r.Float64()*fh, 1+r.Float64()*fw/5, 0.5+r.Float64()*fh/12, (r.Float64()-0.5)*math.Pi, 255)
		}
	case "holes":
		for range 1 + r.IntN(4) {
			cx, cy, a := r.Float64()*fw, r.Float64()*fh, 3+r.Float64()*fw/5
			ellipse(cx, cy, a, a*(0.5+r.Float64()), 255)
			ellipse(cx+r.Float64()*2-1, cy, a/2, a/3, 0)
			if r.IntN(2) == 0 {
				ellipse(cx, cy, a/6, a/6, 255)
			}
		}
	case "touching":
		for range 6 + r.IntN(10) {
			x, y, s := r.IntN(w), r.IntN(h), 1+r.IntN(4)
			for dy := range s {
				for dx := range s {
					set(x+dx, y+dy)
					set(x+s+dx, y+s+dy) // corner to corner
				}
			}
		}
	case "noise":
		for i := range m {
			if r.IntN(3) == 0 {
				m[i] = uint8(1 + r.IntN(255))
			}
		}
	case "lines":
		for range 4 + r.IntN(6) {
			x0, y0, x1, y1 := r.Float64()*fw, r.Float64()*fh, r.Float64()*fw, r.Float64()*fh
			for t := 0.0; t <= 1; t += 0.002 {
				set(int(x0+(x1-x0)*t), int(y0+(y1-y0)*t))
			}
		}
	case "border":
		rotRect(0, fh/2, fw/4, fh/3, 0.3, 255)
		rotRect(fw-1, fh-1, fw/5, fh/5, -0.7, 255)
		rotRect(fw/2, 0, fw/6, 2, 0, 255)
		ellipse(fw*0.6, fh*0.6, fw/8+1, fh/8+1, 255)
	case "full":
		for i := range m {
			m[i] = 255
		}
		if w > 4 && h > 4 {
			ellipse(fw/2, fh/2, fw/5, fh/5, 0)
		}
	case "text":
		// words: rows of rectangles with gaps, as a detector's map of a page
		for row := 2; row+6 < h; row += 9 + r.IntN(5) {
			for x := 1 + r.IntN(5); x < w-4; {
				l := 4 + r.IntN(min(40, w))
				rotRect(float64(x)+float64(l)/2, float64(row)+3, float64(l)/2, 2.5+r.Float64(), (r.Float64()-0.5)*0.08, 255)
				x += l + 3 + r.IntN(8)
			}
		}
	}
	return m
}

type mapCase struct {
	Kind  string    `json:"kind"`
	W     int       `json:"w"`
	H     int       `json:"h"`
	File  string    `json:"file"`
	Polys [][]Point `json:"polys"`
	bin   []uint8
}

func (p Point) MarshalJSON() ([]byte, error) { return json.Marshal([2]int{p.X, p.Y}) }

func (p *Point) UnmarshalJSON(b []byte) error {
	var v [2]int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.X, p.Y = v[0], v[1]
	return nil
}

type refOut struct {
	Contours  [][]Point       `json:"contours"`
	HullsCW   [][]int         `json:"hulls_cw"`
	HullsCCW  [][]int         `json:"hulls_ccw"`
	Rects     [][5]float64    `json:"rects"`
	Boxes     [][4][2]float64 `json:"boxes"`
	Distances []*float64      `json:"distances"`
	Offsets   [][][]Point     `json:"offsets"`
	Fills     [][]int         `json:"fills"`
}

// mapCases are the generated maps: every kind at odd and tiny sizes.
func mapCases(t *testing.T, dir string) []mapCase {
	sizes := [][2]int{{1, 1}, {1, 7}, {9, 1}, {2, 2}, {3, 5}, {17, 13}, {64, 48}, {131, 77}, {320, 96}}
	kinds := []string{"blobs", "rects", "holes", "touching", "noise", "lines", "border", "full", "text"}
	var cases []mapCase
	seed := uint64(1)
	for _, k := range kinds {
		for _, s := range sizes {
			for rep := range 2 {
				seed++
				c := mapCase{Kind: k, W: s[0], H: s[1], File: filepath.Join(dir, fmt.Sprintf("%s-%dx%d-%d.raw", k, s[0], s[1], rep))}
				c.bin = shapeMap(k, s[0], s[1], seed)
				c.Polys = randomPolys(rand.New(rand.NewPCG(seed, 3)), s[0], s[1])
				if err := os.WriteFile(c.File, c.bin, 0o644); err != nil {
					t.Fatal(err)
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// randomPolys are polygons to fill: quadrilaterals, triangles and
// pentagons, inside, across and outside the map's edges.
func randomPolys(r *rand.Rand, w, h int) [][]Point {
	var ps [][]Point
	for range 4 {
		n := 3 + r.IntN(3)
		p := make([]Point, n)
		for i := range p {
			p[i] = Point{r.IntN(w+8) - 4, r.IntN(h+8) - 4}
		}
		ps = append(ps, p)
	}
	// a rotated box, as box_score_fast fills them
	cx, cy := float64(r.IntN(w+1)), float64(r.IntN(h+1))
	a, th := 1+r.Float64()*float64(w)/2, r.Float64()*math.Pi
	c, s := math.Cos(th), math.Sin(th)
	b := 1 + r.Float64()*float64(h)/4
	var box []Point
	for _, k := range [4][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
		box = append(box, Point{int(cx + k[0]*a*c - k[1]*b*s), int(cy + k[0]*a*s + k[1]*b*c)})
	}
	return append(ps, box)
}

func runRef(t *testing.T, cases []mapCase, dir string) []refOut {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s missing: ci/install-deps.sh installs Debian's python3 with OpenCV, pyclipper and shapely: %v", python, err)
	}
	req, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	reqPath, outPath := filepath.Join(dir, "req.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(reqPath, req, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "testdata/geom_ref.py", reqPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("geom_ref.py (python3-opencv, python3-pyclipper, python3-shapely): %v\n%s", err, out)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var outs []refOut
	if err := json.Unmarshal(b, &outs); err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(cases) {
		t.Fatalf("reference answered %d cases, want %d", len(outs), len(cases))
	}
	return outs
}

func TestAgainstOpenCV(t *testing.T) {
	dir := t.TempDir()
	cases := mapCases(t, dir)
	refs := runRef(t, cases, dir)
	var nContours, nOffsets, nFills int
	for i, c := range cases {
		ref := refs[i]
		name := fmt.Sprintf("%s-%dx%d-%d", c.Kind, c.W, c.H, i)
		t.Run(name, func(t *testing.T) {
			got := FindContours(c.bin, c.W, c.H)
			if !slices.EqualFunc(got, ref.Contours, slices.Equal) {
				t.Fatalf("contours:\n got %v\nwant %v", got, ref.Contours)
			}
			nContours += len(got)
			for j, ct := range got {
				if h := ConvexHull(ct, true); !slices.Equal(h, ref.HullsCW[j]) {
					t.Errorf("contour %d %v: clockwise hull %v, want %v", j, ct, h, ref.HullsCW[j])
				}
				if h := ConvexHull(ct, false); !slices.Equal(h, ref.HullsCCW[j]) {
					t.Errorf("contour %d %v: hull %v, want %v", j, ct, h, ref.HullsCCW[j])
				}
				r := MinAreaRect(ct)
				want := ref.Rects[j]
				if gotR := [5]float64{float64(r.Center.X), float64(r.Center.Y), float64(r.Width), float64(r.Height), float64(r.Angle)}; gotR != want {
					t.Errorf("contour %d %v: minAreaRect %v, want %v", j, ct, gotR, want)
					continue
				}
				box := BoxPoints(r)
				for k, p := range box {
					if [2]float64{float64(p.X), float64(p.Y)} != ref.Boxes[j][k] {
						t.Errorf("contour %d: boxPoints %v, want %v", j, box, ref.Boxes[j])
						break
					}
				}
				if ref.Distances[j] == nil {
					continue
				}
				d := PolygonArea(box[:]) * 1.5 / PolygonPerimeter(box[:])
				if d != *ref.Distances[j] {
					t.Errorf("contour %d: unclip distance %v, want %v", j, d, *ref.Distances[j])
				}
				off := OffsetRound(Trunc(box[:]), *ref.Distances[j])
				if len(ref.Offsets[j]) == 0 && off == nil {
					continue
				}
				if len(ref.Offsets[j]) != 1 || !slices.Equal(off, ref.Offsets[j][0]) {
					t.Errorf("contour %d box %v d %v: offset\n got %v\nwant %v", j, box, *ref.Distances[j], off, ref.Offsets[j])
				}
				nOffsets++
			}
			for j, p := range c.Polys {
				mask := make([]uint8, c.W*c.H)
				FillPoly(mask, c.W, c.H, p, 1)
				var set []int
				for k, v := range mask {
					if v != 0 {
						set = append(set, k)
					}
				}
				if !slices.Equal(set, ref.Fills[j]) && !(len(set) == 0 && len(ref.Fills[j]) == 0) {
					t.Errorf("fillPoly %v: %d pixels set, want %d\n got %v\nwant %v", p, len(set), len(ref.Fills[j]), set, ref.Fills[j])
				}
				nFills++
			}
		})
	}
	t.Logf("%d maps: %d contours, their hulls, rectangles and boxes equal to OpenCV's; %d offsets equal to pyclipper's; %d filled polygons equal to OpenCV's",
		len(cases), nContours, nOffsets, nFills)
}
