//go:build !race

// The tests in this file compare the detections svc decodes with a
// reference of Ultralytics' algorithm, case by case, in one goroutine. The
// race detector finds races between goroutines: it would find none here,
// and makes them several times slower. make test runs them in a pass of
// their own without it (ci/norace.sh); go test without -race runs them
// with the rest.

package detect

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

	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

const python = "/usr/bin/python3"

// refCase is one case of TestUltralytics as ultralytics_ref.py reads it.
type refCase struct {
	Layout      Layout    `json:"layout"`
	Task        Task      `json:"task"`
	Classes     int       `json:"classes"`
	Masks       int       `json:"masks"`
	Keypoints   int       `json:"keypoints"`
	KDims       int       `json:"kdims"`
	W           int       `json:"W"`
	H           int       `json:"H"`
	PW          int       `json:"w"`
	PH          int       `json:"h"`
	File        string    `json:"file"`
	Shape       []int64   `json:"shape"`
	Protos      string    `json:"protos,omitempty"`
	ProtosShape []int64   `json:"protos_shape,omitempty"`
	Params      refParams `json:"params"`

	out, protos *tensor.Tensor
}

type refParams struct {
	Conf     float64 `json:"conf"`
	IoU      float64 `json:"iou"`
	MaxDet   int     `json:"max_det"`
	Agnostic bool    `json:"agnostic"`
	Classes  []int   `json:"classes"`
}

// refDet is one detection of the reference.
type refDet struct {
	Box        [4]float64   `json:"box"`
	Score      float64      `json:"score"`
	Class      int          `json:"class"`
	Keypoints  [][2]float64 `json:"keypoints"`
	MaskIoU    *float64     `json:"mask_iou"`
	PolygonIoU *float64     `json:"polygon_iou"`
}

// row is one box of a generated output: centre box in the input's
// pixels, class scores, objectness (yolov5) and extra values.
type row struct {
	box    [4]float32
	scores []float32
	obj    float32
	extra  []float32
}

// caseGen makes one case's output.
type caseGen struct {
	r    *rand.Rand
	c    *refCase
	rows []row
	// disks are the prototype masks' disks (segment): centre and radius
	// in the input's pixels.
	disks [][3]float32
}

// anchors is the number of rows of a YOLO output for a W×H input.
func anchors(W, H int) int {
	n := 0
	for _, s := range []int{8, 16, 32} {
		n += (W / s) * (H / s)
	}
	return n
}

// pictureSize is a random picture size: random area and aspect ratio,
// or (every seventh) one whose letterbox rounds half to even.
func pictureSize(r *rand.Rand, i, W, H int) (int, int) {
	if i%7 == 3 {
		return 2*(4+r.IntN(W/2-4)) + 1, 2 * H
	}
	side := math.Exp(math.Log(16) + r.Float64()*(math.Log(4000)-math.Log(16)))
	aspect := math.Exp((r.Float64()*2 - 1) * 2.2)
	w := int(math.Max(8, math.Min(5000, side*math.Sqrt(aspect))))
	h := int(math.Max(8, math.Min(5000, side/math.Sqrt(aspect))))
	return w, h
}

// newCase draws case i's shape, task and settings.
func newCase(r *rand.Rand, i int) *refCase {
	layouts := Layouts()
	c := &refCase{Layout: layouts[i%len(layouts)], Task: Detect}
	sizes := [][2]int{{640, 640}, {320, 320}, {256, 192}}
	sz := sizes[r.IntN(len(sizes))]
	c.W, c.H = sz[0], sz[1]
	c.PW, c.PH = pictureSize(r, i, c.W, c.H)
	c.Classes = 1 + r.IntN(12)
	if r.IntN(4) == 0 {
		c.Classes = 80
	}
	if c.Layout != RTDETR {
		switch (i / len(layouts)) % 3 {
		case 1:
			c.Task, c.Masks = Segment, []int{8, 32}[r.IntN(2)]
			// The reference compares masks on the picture's pixels:
			// pictures up to 1600 pixels a side keep it quick.
			for max(c.PW, c.PH) > 1600 {
				c.PW, c.PH = max((c.PW+1)/2, 8), max((c.PH+1)/2, 8)
			}
		case 2:
			c.Task, c.Keypoints, c.KDims = Pose, []int{4, 17}[r.IntN(2)], 2+r.IntN(2)
		}
	}
	if c.Layout == YOLOv5 && c.Task == Pose {
		c.Task, c.Keypoints, c.KDims = Detect, 0, 0
	}
	c.Params = refParams{Conf: 0.1 + 0.4*r.Float64(), IoU: 0.3 + 0.55*r.Float64(), MaxDet: 300, Agnostic: r.IntN(3) == 0}
	if r.IntN(4) == 0 {
		c.Params.MaxDet = 1 + r.IntN(6)
	}
	if r.IntN(5) == 0 {
		c.Params.Classes = []int{r.IntN(c.Classes), r.IntN(c.Classes)}
	}
	return c
}

// plant adds clusters of overlapping boxes: each object's box, jittered
// copies of it (some of another class), scores over the threshold.
func (g *caseGen) plant() {
	r, c := g.r, g.c
	objects := r.IntN(9)
	if c.Masks > 0 {
		objects = min(objects, c.Masks)
	}
	for o := range objects {
		w := float32(8 + r.Float64()*float64(c.W)/2)
		h := float32(8 + r.Float64()*float64(c.H)/2)
		cx := float32(r.Float64() * float64(c.W))
		cy := float32(r.Float64() * float64(c.H))
		class := r.IntN(c.Classes)
		if c.Masks > 0 {
			g.disks = append(g.disks, [3]float32{cx, cy, float32(0.3+0.5*r.Float64()) * min(w, h)})
		}
		for k := range 1 + r.IntN(6) {
			j := func(v float32, s float32) float32 { return v + s*float32(r.NormFloat64()*0.08) }
			b := [4]float32{j(cx, w), j(cy, h), j(w, w), j(h, h)}
			cls := class
			if k > 0 && r.IntN(3) == 0 {
				cls = r.IntN(c.Classes)
			}
			g.rows = append(g.rows, g.newRow(b, cls, float32(c.Params.Conf+(0.99-c.Params.Conf)*r.Float64()), o))
		}
	}
}

// newRow makes a row of class cls scoring score, for object o (-1: a
// background box).
func (g *caseGen) newRow(b [4]float32, cls int, score float32, o int) row {
	r, c := g.r, g.c
	x := row{box: b, scores: make([]float32, c.Classes), obj: 1}
	for k := range x.scores {
		x.scores[k] = float32(r.Float64() * c.Params.Conf * 0.5)
	}
	x.scores[cls] = score
	if c.Layout == YOLOv5 {
		x.obj = float32(math.Sqrt(float64(score))) + float32(r.Float64()*0.01)
		x.obj = min(x.obj, 1)
		for k := range x.scores {
			x.scores[k] /= x.obj
		}
	}
	switch {
	case c.Masks > 0:
		x.extra = make([]float32, c.Masks)
		for k := range x.extra {
			x.extra[k] = float32(r.NormFloat64() * 0.3)
		}
		if o >= 0 {
			x.extra[o] = 1
		}
	case c.Keypoints > 0:
		x.extra = make([]float32, c.Keypoints*c.KDims)
		for k := range c.Keypoints {
			x.extra[k*c.KDims] = b[0] + b[2]*float32(r.Float64()*1.4-0.7)
			x.extra[k*c.KDims+1] = b[1] + b[3]*float32(r.Float64()*1.4-0.7)
			if c.KDims == 3 {
				x.extra[k*c.KDims+2] = float32(r.Float64())
			}
		}
	}
	return x
}

// background is a random box, mostly under the threshold.
func (g *caseGen) background() row {
	r, c := g.r, g.c
	b := [4]float32{float32(r.Float64() * float64(c.W)), float32(r.Float64() * float64(c.H)),
		float32(2 + r.Float64()*float64(c.W)/3), float32(2 + r.Float64()*float64(c.H)/3)}
	score := float32(r.Float64() * c.Params.Conf)
	if rate := 40 + 360*min(c.Masks, 1); r.IntN(rate) == 0 {
		score = float32(c.Params.Conf + (1-c.Params.Conf)*r.Float64())
	}
	return g.newRow(b, r.IntN(c.Classes), score, -1)
}

// tensor lays the rows out as the case's layout, background rows around
// them at random places.
func (g *caseGen) tensor() *tensor.Tensor {
	c := g.c
	n := 300
	switch c.Layout {
	case YOLOv8:
		n = anchors(c.W, c.H)
	case YOLOv5:
		n = 3 * anchors(c.W, c.H)
	}
	rows := make([]row, n)
	at := g.r.Perm(n)
	for i := range rows {
		rows[i] = g.background()
	}
	for k, x := range g.rows {
		rows[at[k%n]] = x
	}
	h := Head{Layout: c.Layout, Task: c.Task, Classes: c.Classes, Masks: c.Masks, Keypoints: c.Keypoints, KeypointDims: c.KDims}
	width := h.Width()
	data := make([]float32, n*width)
	for i, x := range rows {
		v := g.values(x)
		for j, f := range v {
			if c.Layout == YOLOv8 {
				data[j*n+i] = f
			} else {
				data[i*width+j] = f
			}
		}
	}
	shape := []int64{1, int64(n), int64(width)}
	if c.Layout == YOLOv8 {
		shape = []int64{1, int64(width), int64(n)}
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: shape, Data: data}
}

// values is a row's values in the case's layout.
func (g *caseGen) values(x row) []float32 {
	b := x.box
	switch g.c.Layout {
	case YOLOv5:
		v := append([]float32{b[0], b[1], b[2], b[3], x.obj}, x.scores...)
		return append(v, x.extra...)
	case End2End:
		best := 0
		for k, s := range x.scores {
			if s > x.scores[best] {
				best = k
			}
		}
		v := []float32{b[0] - b[2]/2, b[1] - b[3]/2, b[0] + b[2]/2, b[1] + b[3]/2, x.scores[best], float32(best)}
		return append(v, x.extra...)
	case RTDETR:
		v := []float32{b[0] / float32(g.c.W), b[1] / float32(g.c.H), b[2] / float32(g.c.W), b[3] / float32(g.c.H)}
		return append(v, x.scores...)
	}
	v := append([]float32{b[0], b[1], b[2], b[3]}, x.scores...)
	return append(v, x.extra...)
}

// protoTensor is the prototype masks: a cone over each disk (positive
// inside it), noise elsewhere.
func (g *caseGen) protoTensor() *tensor.Tensor {
	c := g.c
	mh, mw := c.H/4, c.W/4
	data := make([]float32, c.Masks*mh*mw)
	for k := range c.Masks {
		d := [3]float32{float32(g.r.Float64() * float64(c.W)), float32(g.r.Float64() * float64(c.H)), 20}
		if k < len(g.disks) {
			d = g.disks[k]
		}
		for y := range mh {
			for x := range mw {
				dist := math.Hypot(float64(4*x+2)-float64(d[0]), float64(4*y+2)-float64(d[1]))
				data[(k*mh+y)*mw+x] = float32(6*(1-dist/float64(d[2])) + g.r.NormFloat64()*0.2)
			}
		}
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, int64(c.Masks), int64(mh), int64(mw)}, Data: data}
}

func writeFloats(t *testing.T, path string, v []float32) {
	t.Helper()
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// makeCases generates n cases into dir.
func makeCases(t *testing.T, dir string, n int) []*refCase {
	r := rand.New(rand.NewPCG(39, 2026))
	cases := make([]*refCase, n)
	for i := range cases {
		c := newCase(r, i)
		g := &caseGen{r: r, c: c}
		g.plant()
		c.out = g.tensor()
		c.File, c.Shape = filepath.Join(dir, fmt.Sprintf("%d.out", i)), c.out.Shape
		writeFloats(t, c.File, c.out.Data.([]float32))
		if c.Masks > 0 {
			c.protos = g.protoTensor()
			c.Protos, c.ProtosShape = filepath.Join(dir, fmt.Sprintf("%d.protos", i)), c.protos.Shape
			writeFloats(t, c.Protos, c.protos.Data.([]float32))
		}
		cases[i] = c
	}
	return cases
}

// frame is where the case's picture goes: the yolo preset (stretched
// for RT-DETR, as Ultralytics' RT-DETR predictor does).
func (c *refCase) frame(t *testing.T) image.Frame {
	s := image.Settings{Preset: "yolo", Size: []int{c.H, c.W}}
	if c.Layout == RTDETR {
		s.Resize = image.Stretch
	}
	p, err := image.NewPlan(s, tensor.Spec{Name: "images", DType: tensor.Float32, Shape: []int64{1, 3, int64(c.H), int64(c.W)}})
	if err != nil {
		t.Fatal(err)
	}
	return p.Frame(c.PW, c.PH, c.W)
}

// head is the case's head.
func (c *refCase) head() Head {
	return Head{Layout: c.Layout, Task: c.Task, Classes: c.Classes, Masks: c.Masks, Keypoints: c.Keypoints, KeypointDims: c.KDims}
}

// params are the case's settings.
func (c *refCase) params() Params {
	return Params{Confidence: c.Params.Conf, IoU: c.Params.IoU, MaxDet: c.Params.MaxDet, Agnostic: c.Params.Agnostic, Classes: c.Params.Classes}
}

// candidates counts the case's boxes over the threshold, before
// suppression.
func (c *refCase) candidates(t *testing.T) int {
	o, err := readOutput(c.out, c.head())
	if err != nil {
		t.Fatal(err)
	}
	return len(o.candidates(0, c.head(), c.params(), c.frame(t)))
}

// decode is svc's answer to the case.
func (c *refCase) decode(t *testing.T) []Detection {
	d := &Decoder{Head: c.head()}
	dets, err := d.Decode(c.out, c.protos, &Request{Params: c.params(), Frames: []image.Frame{c.frame(t)}, RLE: true})
	if err != nil {
		t.Fatal(err)
	}
	return dets[0]
}

// TestUltralytics decodes 240 generated outputs (60 per layout; detect,
// segment and pose; pictures of random sizes and aspect ratios, some
// whose letterbox rounds half to even; clusters of overlapping boxes of
// one or several classes, class-aware and agnostic suppression, random
// thresholds, max_det and class filters) and compares each answer with
// ultralytics_ref.py's: the same boxes within 0.5 pixel, in the same
// order, of the same classes, with the same float32 scores; keypoints
// within 0.5 pixel; masks and polygons with an IoU of at least 0.98.
func TestUltralytics(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s missing: make test installs Debian's python3-numpy and python3-opencv (ci/install-deps.sh): %v", python, err)
	}
	dir := t.TempDir()
	cases := makeCases(t, dir, 240)
	answers := make([]json.RawMessage, len(cases))
	got := make([][]Detection, len(cases))
	for i, c := range cases {
		got[i] = c.decode(t)
		answers[i] = AppendJSON(nil, got[i])
	}
	casesFile, answersFile, refFile := filepath.Join(dir, "cases.json"), filepath.Join(dir, "answers.json"), filepath.Join(dir, "ref.json")
	writeJSON(t, casesFile, cases)
	writeJSON(t, answersFile, answers)
	out, err := exec.Command(python, "testdata/ultralytics_ref.py", casesFile, answersFile, refFile).CombinedOutput()
	if err != nil {
		t.Fatalf("ultralytics_ref.py (python3-numpy, python3-opencv): %v\n%s", err, out)
	}
	var refs [][]refDet
	readJSON(t, refFile, &refs)
	stats := map[string]int{}
	for i, c := range cases {
		compareCase(t, i, c, got[i], refs[i], stats)
		if c.Layout == YOLOv8 || c.Layout == YOLOv5 {
			n := c.candidates(t) - len(got[i])
			stats["suppressed"] += n
			if c.Params.Agnostic {
				stats["suppressed agnostic"] += n
			}
		}
	}
	t.Logf("%d cases: %v", len(cases), stats)
	for _, k := range []string{"yolov8 boxes", "yolov5 boxes", "end2end boxes", "rtdetr boxes", "masks", "keypoints", "suppressed", "suppressed agnostic"} {
		if stats[k] < 20 {
			t.Errorf("only %d %s compared: the cases do not exercise them", stats[k], k)
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// compareCase compares svc's answer to case i with the reference's.
func compareCase(t *testing.T, i int, c *refCase, got []Detection, want []refDet, stats map[string]int) {
	t.Helper()
	where := fmt.Sprintf("case %d (%s %s, picture %d×%d, input %d×%d, %+v)", i, c.Layout, c.Task, c.PW, c.PH, c.W, c.H, c.Params)
	if len(got) != len(want) {
		t.Errorf("%s: %d detections, the reference %d:\n got %v\nwant %v", where, len(got), len(want), got, want)
		return
	}
	stats[string(c.Layout)+" boxes"] += len(got)
	for k, w := range want {
		g := got[k]
		if g.Index != w.Class || g.Score != float32(w.Score) {
			t.Errorf("%s, detection %d: class %d score %v, the reference class %d score %v", where, k, g.Index, g.Score, w.Class, float32(w.Score))
		}
		gb := [4]float32{g.Box.X1, g.Box.Y1, g.Box.X2, g.Box.Y2}
		for j := range gb {
			if math.Abs(float64(gb[j])-w.Box[j]) > 0.5 {
				t.Errorf("%s, detection %d: box %v, the reference %v", where, k, gb, w.Box)
				break
			}
		}
		compareExtras(t, fmt.Sprintf("%s, detection %d", where, k), g, w, stats)
	}
}

// compareExtras compares a detection's keypoints and masks.
func compareExtras(t *testing.T, where string, g Detection, w refDet, stats map[string]int) {
	t.Helper()
	if len(g.Keypoints) != len(w.Keypoints) {
		t.Errorf("%s: %d keypoints, the reference %d", where, len(g.Keypoints), len(w.Keypoints))
	}
	for j := range min(len(g.Keypoints), len(w.Keypoints)) {
		stats["keypoints"]++
		kp := g.Keypoints[j]
		if math.Abs(float64(kp.X)-w.Keypoints[j][0]) > 0.5 || math.Abs(float64(kp.Y)-w.Keypoints[j][1]) > 0.5 {
			t.Errorf("%s: keypoint %d at (%v, %v), the reference %v", where, j, kp.X, kp.Y, w.Keypoints[j])
		}
	}
	if w.MaskIoU == nil && w.PolygonIoU == nil {
		return
	}
	stats["masks"]++
	if w.MaskIoU == nil || *w.MaskIoU < 0.98 {
		t.Errorf("%s: mask IoU with the reference %v, want at least 0.98", where, deref(w.MaskIoU))
	}
	if w.PolygonIoU == nil || *w.PolygonIoU < 0.98 {
		t.Errorf("%s: polygon IoU with the reference %v, want at least 0.98", where, deref(w.PolygonIoU))
	}
}

func deref(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}
