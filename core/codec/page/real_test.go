//go:build !race

// The tests in this file compare the text boxes svc finds with PaddleOCR's
// post-processing, case by case, in one goroutine. The race detector finds
// races between goroutines: it would find none here, and makes them
// several times slower. make test runs them in a pass of their own without
// it (ci/norace.sh); go test without -race runs them with the rest.

package page

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-dev/svc/core/codec/geom"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

// detModel is PaddleOCR's PP-OCR text detector that make fetches.
const detModel = "../../../build/models/paddleocr-det/model.onnx"

type renderedPage struct {
	Name string `json:"name"`
	W    int    `json:"w"`
	H    int    `json:"h"`
	DetW int    `json:"det_w"`
	DetH int    `json:"det_h"`
}

// detMap runs the detector on a page resized for it (raw BGR): the
// input normalised as PaddleOCR's NormalizeImage does (x/255, ImageNet
// mean and std in channel order), the output's probability map.
func detMap(t *testing.T, p *session.Predictor, bgr []uint8, w, h int) []float32 {
	t.Helper()
	mean := [3]float32{0.485, 0.456, 0.406}
	std := [3]float32{0.229, 0.224, 0.225}
	x := make([]float32, 3*w*h)
	for i := range w * h {
		for c := range 3 {
			x[c*w*h+i] = (float32(bgr[i*3+c])/255 - mean[c]) / std[c]
		}
	}
	res, err := p.Predict(context.Background(), []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 3, int64(h), int64(w)}, Data: x}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	out, err := res.Tensor(0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int64{1, 1, int64(h), int64(w)}) {
		t.Fatalf("detector output %v, want [1 1 %d %d]", out.Shape, h, w)
	}
	return append([]float32(nil), out.Data.([]float32)...)
}

// TestDBOnDetectorMaps gives the real detector's probability maps of
// rendered text pages to both implementations: svc's boxes, filtered and
// sorted boxes and crops must be PaddleOCR's.
func TestDBOnDetectorMaps(t *testing.T) {
	if _, err := os.Stat(detModel); err != nil {
		t.Fatalf("the PaddleOCR detector (make models fetches it): %v", err)
	}
	dir := t.TempDir()
	out, err := exec.Command(python, "testdata/render_pages.py", dir).Output()
	if err != nil {
		t.Fatalf("render_pages.py (python3-pil, python3-opencv, fonts-dejavu-core): %v", err)
	}
	var pages []renderedPage
	if err := json.Unmarshal(out, &pages); err != nil {
		t.Fatal(err)
	}
	onnxrttest.Load(t)
	p, err := session.New(session.Options{Name: "paddleocr-det", File: detModel, Runtime: config.Default().Runtime}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })

	var cases []dbCase
	for i, pg := range pages {
		if h, w := DetectorSize(pg.H, pg.W, 960, LimitMax); h != pg.DetH || w != pg.DetW {
			t.Fatalf("%s: DetectorSize %d×%d, the renderer's %d×%d", pg.Name, w, h, pg.DetW, pg.DetH)
		}
		det, err := os.ReadFile(filepath.Join(dir, pg.Name+".det"))
		if err != nil {
			t.Fatal(err)
		}
		pix, err := os.ReadFile(filepath.Join(dir, pg.Name+".rgb"))
		if err != nil {
			t.Fatal(err)
		}
		pred := detMap(t, p, det, pg.DetW, pg.DetH)
		file := filepath.Join(dir, pg.Name+".f32")
		writeFloats(t, file, pred)
		for _, dilate := range []bool{false, true} {
			c := dbCase{Kind: pg.Name, W: pg.DetW, H: pg.DetH, DestW: pg.W, DestH: pg.H,
				File: file, Page: filepath.Join(dir, pg.Name+".rgb"), pred: pred, pix: pix,
				Params: dbParams{Thresh: 0.3, BoxThresh: 0.6, UnclipRatio: 1.5, MaxCandidates: 1000, MinSize: 3, Dilate: dilate}}
			for _, b := range Filter(c.Params.db().Boxes(c.pred, c.W, c.H, c.DestW, c.DestH), c.DestW, c.DestH) {
				c.Quads = append(c.Quads, quadJSON(b.Quad))
			}
			c.Quads = append(c.Quads, randomQuads(rand.New(rand.NewPCG(uint64(i), 2)), c.DestW, c.DestH)...)
			cases = append(cases, c)
		}
	}
	ref := runDBRef(t, cases, dir)
	var nBoxes int
	var st cropStats
	for i, c := range cases {
		want := ref.Cases[i]
		boxes := c.Params.db().Boxes(c.pred, c.W, c.H, c.DestW, c.DestH)
		got, scores := quadsAndScores(boxes)
		if !slices.Equal(got, want.Boxes) || !slices.Equal(scores, want.Scores) {
			t.Errorf("%s dilate=%v: boxes\n got %v %v\nwant %v %v", c.Kind, c.Params.Dilate, got, scores, want.Boxes, want.Scores)
			continue
		}
		if len(got) < 3 {
			t.Errorf("%s: %d boxes: the rendered page has more lines", c.Kind, len(got))
		}
		nBoxes += len(got)
		filtered := Filter(boxes, c.DestW, c.DestH)
		Sort(filtered)
		got = got[:0]
		for _, b := range filtered {
			got = append(got, quadJSON(b.Quad))
		}
		if !slices.Equal(got, want.Sorted) {
			t.Errorf("%s dilate=%v: sorted boxes\n got %v\nwant %v", c.Kind, c.Params.Dilate, got, want.Sorted)
		}
		img := Image{Pix: c.pix, W: c.DestW, H: c.DestH, C: 3}
		for j, q := range c.Quads {
			var quad Quad
			for k, pt := range q {
				quad[k] = geom.Point{X: pt[0], Y: pt[1]}
			}
			compareCrop(t, Crop(img, quad), want.Crops[j].W, want.Crops[j].H, want.Crops[j].File, &st)
		}
	}
	if st.n == 0 || st.within1*100 < st.n*99 {
		t.Errorf("crops: %d of %d elements within one grey level of OpenCV's, want ≥ 99 %%", st.within1, st.n)
	}
	t.Logf("%d detector maps of %d rendered pages: %d boxes, scores, filtered and sorted boxes equal; crops: %d of %d elements equal, %d within one grey level",
		len(cases), len(pages), nBoxes, st.equal, st.n, st.within1)
}

func TestDBAgainstPaddleOCR(t *testing.T) {
	dir := t.TempDir()
	cases := dbCases(t, dir)
	for i := range cases {
		c := &cases[i]
		if c.Page == "" {
			continue
		}
		boxes := Filter(c.Params.db().Boxes(c.pred, c.W, c.H, c.DestW, c.DestH), c.DestW, c.DestH)
		for _, b := range boxes {
			c.Quads = append(c.Quads, quadJSON(b.Quad))
		}
		c.Quads = append(c.Quads, randomQuads(rand.New(rand.NewPCG(uint64(i), 1)), c.DestW, c.DestH)...)
	}
	ref := runDBRef(t, cases, dir)
	var nBoxes, nFiltered int
	var st cropStats
	for i, c := range cases {
		want := ref.Cases[i]
		t.Run(fmt.Sprintf("%s-%dx%d-to-%dx%d-dilate=%v", c.Kind, c.W, c.H, c.DestW, c.DestH, c.Params.Dilate), func(t *testing.T) {
			boxes := c.Params.db().Boxes(c.pred, c.W, c.H, c.DestW, c.DestH)
			got, scores := quadsAndScores(boxes)
			if !slices.Equal(got, want.Boxes) {
				t.Fatalf("boxes:\n got %v\nwant %v", got, want.Boxes)
			}
			if !slices.Equal(scores, want.Scores) {
				t.Errorf("scores:\n got %v\nwant %v", scores, want.Scores)
			}
			nBoxes += len(got)
			filtered := Filter(boxes, c.DestW, c.DestH)
			got = got[:0]
			for _, b := range filtered {
				got = append(got, quadJSON(b.Quad))
			}
			if !slices.Equal(got, want.Filtered) {
				t.Fatalf("filter_tag_det_res:\n got %v\nwant %v", got, want.Filtered)
			}
			nFiltered += len(got)
			Sort(filtered)
			got = got[:0]
			for _, b := range filtered {
				got = append(got, quadJSON(b.Quad))
			}
			if !slices.Equal(got, want.Sorted) {
				t.Errorf("sorted_boxes:\n got %v\nwant %v", got, want.Sorted)
			}
			img := Image{Pix: c.pix, W: c.DestW, H: c.DestH, C: 3}
			for j, q := range c.Quads {
				var quad Quad
				for k, p := range q {
					quad[k] = geom.Point{X: p[0], Y: p[1]}
				}
				cr := want.Crops[j]
				compareCrop(t, Crop(img, quad), cr.W, cr.H, cr.File, &st)
			}
		})
	}
	if st.n == 0 || st.within1*100 < st.n*99 {
		t.Errorf("crops: %d of %d elements within one grey level of OpenCV's, want ≥ 99 %%", st.within1, st.n)
	}
	t.Logf("%d maps: %d boxes and scores equal, %d after filter_tag_det_res and sorted_boxes equal; crops: %d of %d elements equal (%.4f %%), %d within one grey level",
		len(cases), nBoxes, nFiltered, st.equal, st.n, 100*float64(st.equal)/float64(max(st.n, 1)), st.within1)
}

// quadsAndScores are boxes' quadrilaterals, as the reference writes them,
// and their scores.
func quadsAndScores(boxes []Box) (quads [][4][2]int, scores []float64) {
	for _, b := range boxes {
		quads = append(quads, quadJSON(b.Quad))
		scores = append(scores, b.Score)
	}
	return quads, scores
}
