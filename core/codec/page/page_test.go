package page

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const python = "/usr/bin/python3"

// probMap draws a w×h map of the kind a DB detector outputs: words as
// (slightly rotated) rectangles whose probability falls off over a few
// pixels past their edges, with noise, blobs, holes, exact threshold
// values and shapes on the border.
func probMap(kind string, w, h int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 5))
	m := make([]float32, w*h)
	for i := range m {
		m[i] = float32(r.Float64() * 0.05)
	}
	fw, fh := float64(w), float64(h)
	word := func(cx, cy, a, b, th, peak float64) {
		c, s := math.Cos(th), math.Sin(th)
		for y := range h {
			for x := range w {
				dx, dy := float64(x)-cx, float64(y)-cy
				u, t := math.Abs(dx*c+dy*s)-a, math.Abs(-dx*s+dy*c)-b
				d := math.Max(u, t)
				if d > 4 {
					continue
				}
				v := peak / (1 + math.Exp(2*d))
				v += (r.Float64() - 0.5) * 0.1
				if float32(v) > m[y*w+x] {
					m[y*w+x] = float32(min(max(v, 0), 1))
				}
			}
		}
	}
	switch kind {
	case "lines":
		for row := 4.0; row < fh-4; row += 8 + r.Float64()*12 {
			for x := 2 + r.Float64()*8; x < fw-6; {
				l := 4 + r.Float64()*math.Min(60, fw/2)
				hgt := 1.5 + r.Float64()*3
				word(x+l/2, row+hgt, l/2, hgt, (r.Float64()-0.5)*0.1, 0.75+r.Float64()*0.25)
				x += l + 2 + r.Float64()*10
			}
			row += 2
		}
	case "rotated":
		for range 3 + r.IntN(6) {
			word(r.Float64()*fw, r.Float64()*fh, 3+r.Float64()*fw/4, 1.5+r.Float64()*6, (r.Float64()-0.5)*math.Pi, 0.6+r.Float64()*0.4)
		}
	case "faint":
		// peaks near box_thresh: scores on either side of 0.6
		for range 6 + r.IntN(6) {
			word(r.Float64()*fw, r.Float64()*fh, 3+r.Float64()*20, 2+r.Float64()*4, (r.Float64()-0.5)*0.3, 0.55+r.Float64()*0.2)
		}
	case "border":
		word(0, fh/2, 10, 4, 0.2, 0.95)
		word(fw-1, fh-1, 14, 5, -0.3, 0.9)
		word(fw/2, 1, fw/3, 3, 0, 0.9)
		word(fw/3, fh*0.6, 8, 3, 0.05, 0.9)
	case "noise":
		for i := range m {
			m[i] = float32(r.Float64())
		}
	case "touching":
		for range 6 {
			x, y := r.Float64()*fw, r.Float64()*fh
			word(x, y, 8, 3, 0, 0.9)
			word(x+17, y+7, 8, 3, 0, 0.9)
			word(x+8, y+9, 6, 2, 0.7, 0.9)
		}
	}
	// exact threshold values: pred > 0.3 compares in float32
	for range len(m) / 50 {
		m[r.IntN(len(m))] = float32(0.3)
	}
	return m
}

// photo is a w×h RGB page: gradients, stripes and noise, so that every
// interpolation error shows.
func photo(w, h int, seed uint64) []uint8 {
	r := rand.New(rand.NewPCG(seed, 9))
	p := make([]uint8, w*h*3)
	for y := range h {
		for x := range w {
			for k := range 3 {
				v := 128 + 100*math.Sin(float64(x)*0.21*float64(k+1)+float64(y)*0.13) + r.NormFloat64()*12
				if (x/5+y/7)%4 == 0 {
					v = 255 - v
				}
				p[(y*w+x)*3+k] = uint8(min(max(v, 0), 255))
			}
		}
	}
	return p
}

type dbParams struct {
	Thresh        float64 `json:"thresh"`
	BoxThresh     float64 `json:"box_thresh"`
	UnclipRatio   float64 `json:"unclip_ratio"`
	MaxCandidates int     `json:"max_candidates"`
	MinSize       float64 `json:"min_size"`
	Dilate        bool    `json:"dilate"`
}

type dbCase struct {
	Kind   string      `json:"kind"`
	W      int         `json:"w"`
	H      int         `json:"h"`
	DestW  int         `json:"dest_w"`
	DestH  int         `json:"dest_h"`
	File   string      `json:"file"`
	Page   string      `json:"page,omitempty"`
	Quads  [][4][2]int `json:"quads"`
	Params dbParams    `json:"params"`
	pred   []float32
	pix    []uint8
}

type dbRef struct {
	Cases []struct {
		Boxes    [][4][2]int `json:"boxes"`
		Scores   []float64   `json:"scores"`
		Filtered [][4][2]int `json:"filtered"`
		Sorted   [][4][2]int `json:"sorted"`
		Crops    []struct {
			W, H int
			File string
		} `json:"crops"`
	} `json:"cases"`
	Sizes [][2]int `json:"sizes"`
}

func quadJSON(q Quad) [4][2]int {
	var o [4][2]int
	for i, p := range q {
		o[i] = [2]int{p.X, p.Y}
	}
	return o
}

func (d dbParams) db() DB {
	return DB(d)
}

// randomQuads are crop boxes beyond the detector's: rotated and skewed
// quadrilaterals, tall ones (turned), ones across the page's edge.
func randomQuads(r *rand.Rand, w, h int) [][4][2]int {
	var qs [][4][2]int
	for range 6 {
		cx, cy := r.Float64()*float64(w), r.Float64()*float64(h)
		a, b, th := 4+r.Float64()*float64(w)/4, 3+r.Float64()*12, (r.Float64()-0.5)*0.6
		if r.IntN(3) == 0 {
			a, b = b, a // tall
		}
		c, s := math.Cos(th), math.Sin(th)
		var q [4][2]int
		for i, k := range [4][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
			q[i] = [2]int{int(cx + k[0]*a*c - k[1]*b*s + (r.Float64()-0.5)*4), int(cy + k[0]*a*s + k[1]*b*c + (r.Float64()-0.5)*4)}
		}
		qs = append(qs, q)
	}
	return qs
}

func writeFloats(t *testing.T, path string, v []float32) {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dbCases(t *testing.T, dir string) []dbCase {
	sizes := [][4]int{{32, 32, 32, 32}, {96, 64, 100, 70}, {160, 96, 157, 93}, {320, 160, 640, 320}, {37, 29, 37, 29}, {224, 128, 1000, 571}}
	kinds := []string{"lines", "rotated", "faint", "border", "noise", "touching"}
	var cases []dbCase
	seed := uint64(100)
	for _, k := range kinds {
		for _, s := range sizes {
			for _, dilate := range []bool{false, true} {
				seed++
				c := dbCase{Kind: k, W: s[0], H: s[1], DestW: s[2], DestH: s[3],
					File:   filepath.Join(dir, fmt.Sprintf("%s-%d.f32", k, seed)),
					Params: dbParams{Thresh: 0.3, BoxThresh: 0.6, UnclipRatio: 1.5, MaxCandidates: 1000, MinSize: 3, Dilate: dilate}}
				if k == "noise" {
					c.Params.MaxCandidates = 50
				}
				c.pred = probMap(k, s[0], s[1], seed)
				writeFloats(t, c.File, c.pred)
				if s[2] <= 640 {
					c.Page = filepath.Join(dir, fmt.Sprintf("page-%d.rgb", seed))
					c.pix = photo(s[2], s[3], seed)
					if err := os.WriteFile(c.Page, c.pix, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

var detSizes = [][4]any{
	{100, 100, 960, "max"}, {1080, 1920, 960, "max"}, {1920, 1080, 960, "max"}, {33, 2000, 960, "max"},
	{700, 500, 736, "min"}, {20, 900, 736, "min"}, {1000, 1000, 736, "min"}, {48, 48, 960, "max"},
	{10, 10, 960, "max"}, {1000, 10, 960, "max"}, {500, 700, 640, "resize_long"}, {16, 1040, 960, "max"},
	{975, 1300, 960, "max"}, {80, 3, 736, "min"},
}

func runDBRef(t *testing.T, cases []dbCase, dir string) dbRef {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s missing: ci/install-deps.sh installs Debian's python3 with OpenCV, pyclipper and shapely: %v", python, err)
	}
	req, err := json.Marshal(map[string]any{"cases": cases, "sizes": detSizes})
	if err != nil {
		t.Fatal(err)
	}
	reqPath, outPath := filepath.Join(dir, "req.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(reqPath, req, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "testdata/db_ref.py", reqPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("db_ref.py (python3-opencv, python3-pyclipper, python3-shapely): %v\n%s", err, out)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var ref dbRef
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != len(cases) || len(ref.Sizes) != len(detSizes) {
		t.Fatalf("reference answered %d cases and %d sizes, want %d and %d", len(ref.Cases), len(ref.Sizes), len(cases), len(detSizes))
	}
	return ref
}

// cropStats counts a crop's elements equal to and within one grey level
// of the reference's.
type cropStats struct{ n, equal, within1 int }

func compareCrop(t *testing.T, got Image, w, h int, file string, st *cropStats) {
	t.Helper()
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.W != w || got.H != h || len(got.Pix) != len(want) {
		t.Errorf("crop %dx%d (%d bytes), want %dx%d (%d bytes)", got.W, got.H, len(got.Pix), w, h, len(want))
		return
	}
	for i, v := range want {
		d := int(got.Pix[i]) - int(v)
		st.n++
		if d == 0 {
			st.equal++
		}
		if d >= -1 && d <= 1 {
			st.within1++
		}
	}
}

func TestDetectorSize(t *testing.T) {
	ref := runDBRef(t, []dbCase{}, t.TempDir())
	for i, s := range detSizes {
		h, w, limit, typ := s[0].(int), s[1].(int), s[2].(int), LimitType(s[3].(string))
		rh, rw := DetectorSize(h, w, limit, typ)
		if [2]int{rh, rw} != ref.Sizes[i] {
			t.Errorf("DetectorSize(%d, %d, %d, %s) = %d×%d, want %v", h, w, limit, typ, rh, rw, ref.Sizes[i])
		}
	}
}
