package pipeline

import (
	"context"
	"image"
	"image/color"
	stddraw "image/draw"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/tensor"
)

// pageResult is the page reader's answer of one page, as JSON.
func pageResult(pages ...string) core.Result {
	return core.NewResult([]*tensor.Tensor{{DType: tensor.String, Shape: []int64{int64(len(pages))}, Data: pages}})
}

// TestPaint draws a page of two lines on a white picture: each box's
// outline in its line's colour, the text's band above it in that colour,
// the box's inside left alone; an answer of other than one page is an
// error.
func TestPaint(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 240, 160))
	white := color.RGBA{255, 255, 255, 255}
	stddraw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, stddraw.Src)
	c, err := draw.New(img)
	if err != nil {
		t.Fatal(err)
	}
	page := `{"lines": [{"box": [[20,40],[120,40],[120,70],[20,70]], "text": "Hi", "score": 0.9},
		{"box": [[30,110],[200,112],[200,140],[30,138]], "text": "there", "score": 0.8}], "text": "Hi\nthere"}`
	if err := Paint(c, pageResult(page)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   image.Point
		want color.RGBA
	}{
		{image.Pt(20, 55), draw.Color(0)},   // the first box's left edge
		{image.Pt(120, 55), draw.Color(0)},  // its right edge
		{image.Pt(70, 70), draw.Color(0)},   // its bottom edge
		{image.Pt(20, 30), draw.Color(0)},   // its label's band, above it
		{image.Pt(70, 55), white},           // its inside
		{image.Pt(30, 124), draw.Color(1)},  // the second box's left edge
		{image.Pt(115, 139), draw.Color(1)}, // its tilted bottom edge
		{image.Pt(150, 20), white},          // nothing drawn there
	} {
		if got := img.RGBAAt(tc.at.X, tc.at.Y); got != tc.want {
			t.Errorf("pixel %v is %v, want %v", tc.at, got, tc.want)
		}
	}
	for _, res := range []core.Result{pageResult(), pageResult(page, page), pageResult("not json")} {
		if err := Paint(c, res); err == nil || !strings.Contains(err.Error(), "draw the page") {
			t.Errorf("an answer of %v: %v, want an error", res, err)
		}
	}
}

// countRuns is an Observer that keeps what it is told.
type countRuns struct {
	stages []string
	items  []int
}

func (c *countRuns) StageRun(stage string, items int, d time.Duration) {
	c.stages, c.items = append(c.stages, stage), append(c.items, items)
}
func (c *countRuns) PageRead(int) {}

// oneRunner answers every run with no output.
type oneRunner struct{ core.Runner }

func (oneRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return core.NewResult(nil), nil
}

// TestObserve: a stage observed tells its Observer of each run, with the
// items of its batch; without an Observer the runner is the stage's own.
func TestObserve(t *testing.T) {
	obs := &countRuns{}
	r := observe(oneRunner{}, StageRecognizer, obs)
	for _, n := range []int64{6, 2} {
		if _, err := r.Predict(context.Background(), []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{n, 3, 48, 320}}}); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(obs.stages, ",") != "recognizer,recognizer" || len(obs.items) != 2 || obs.items[0] != 6 || obs.items[1] != 2 {
		t.Errorf("observed %v %v, want two recognizer runs of 6 and 2", obs.stages, obs.items)
	}
	if _, ok := observe(oneRunner{}, StageDetector, nil).(oneRunner); !ok {
		t.Error("a stage without an Observer is wrapped")
	}
}
