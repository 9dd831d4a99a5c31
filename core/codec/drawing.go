package codec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/detect"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/codec/image"
)

// Drawing formats: what a drawing is answered as.
const (
	DrawPNG  = draw.PNG
	DrawJPEG = draw.JPEG
)

// skeleton is Ultralytics' limbs of COCO's 17 keypoints (1-based).
var skeleton = [][2]int{
	{16, 14}, {14, 12}, {17, 15}, {15, 13}, {12, 13}, {6, 12}, {7, 13}, {6, 7}, {6, 8},
	{7, 9}, {8, 10}, {9, 11}, {2, 3}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7},
}

// limbColors and pointColors index the pose palette as Ultralytics does.
var (
	limbColors  = []int{9, 9, 9, 9, 7, 7, 7, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 16}
	pointColors = []int{16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9}
)

// drawable is the one picture a drawing is made on: its image input and
// its bytes.
func (d *Decoding) drawable() (int, []byte, error) {
	if d != nil && d.set.PicturesInput() >= 0 {
		return d.ownDrawable()
	}
	if d == nil || len(d.set.Images()) != 1 {
		return 0, nil, errors.New("draw answers the picture drawn on, and the model has no single image input to take it")
	}
	k := d.set.Images()[0].Index
	pics := d.pictures[k]
	if len(pics) != 1 {
		return 0, nil, fmt.Errorf("draw answers one picture drawn on, and the request sends %d: send one picture", len(pics))
	}
	return k, pics[0], nil
}

// SentType is the format of a drawing the request names none for: JPEG
// for a JPEG picture (a photograph answered as one: smaller, and quicker
// to encode), PNG for any other.
func (d *Decoding) SentType() string {
	if _, data, err := d.drawable(); err == nil {
		if f, _ := image.Sniff(data); f == "jpeg" {
			return DrawJPEG
		}
	}
	return DrawPNG
}

// CheckDraw refuses, before the model runs, a drawing of a request that
// does not send exactly one picture to the model's one image input; its
// error is a *core.InputError.
func (d *Decoding) CheckDraw() error {
	if _, _, err := d.drawable(); err != nil {
		return &core.InputError{Message: err.Error()}
	}
	return nil
}

// Draw writes the request's picture, as shown, with what the decoded
// outputs of res say drawn on it: each detection output's masks, boxes,
// labels and keypoints, and each classify and ctc output as a caption;
// as PNG or JPEG (mediaType). The picture is the one decoded for the
// model when the request kept it (KeepPictures), whose memory is held
// with the decoding's reservation, and decoded again otherwise; the
// memory the drawing holds besides (the picture in RGBA, and its
// encoding) is reserved from the request's budget first. Both are given
// back when the request ends, once its answer is written. A model whose
// runner decodes its pictures itself (a pipeline) has its answer drawn by
// its Painter, on the picture the runner kept (KeepDecoded; own.go).
func (d *Decoding) Draw(ctx context.Context, res core.Result, w io.Writer, mediaType string) error {
	if d != nil && d.set.PicturesInput() >= 0 {
		return d.drawOwn(ctx, res, w, mediaType)
	}
	c, err := d.canvas(ctx)
	if err != nil {
		return err
	}
	var captions []string
	for _, o := range d.set.outputs {
		if o.det != nil {
			dets, err := d.detections(o, res)
			if err != nil {
				return err
			}
			if len(dets) > 0 {
				drawDetections(c, dets[0])
			}
			continue
		}
		t, err := res.Tensor(o.Index)
		if err != nil {
			return o.wrap(err)
		}
		lines, err := o.captions(t)
		if err != nil {
			return err
		}
		captions = append(captions, lines...)
	}
	c.Caption(captions)
	return c.Encode(w, mediaType)
}

// canvas is a canvas over the request's picture, as shown: the one kept
// by its decoding (Canvas), or the picture decoded again when none was
// kept.
func (d *Decoding) canvas(ctx context.Context) (*draw.Canvas, error) {
	k, data, err := d.drawable()
	if err != nil {
		return nil, &core.InputError{Message: err.Error()}
	}
	frames := d.frames[k]
	if len(frames) == 1 {
		if err := budget.Reserve(ctx, int64(frames[0].Width)*int64(frames[0].Height)*12, "to draw its picture"); err != nil {
			return nil, err
		}
	}
	if kept := d.kept[k]; len(kept) == 1 && kept[0] != nil {
		// The decoder's picture is the canvas's from now on (drawn on,
		// or converted and let go).
		delete(d.kept, k)
		return Canvas(kept[0])
	}
	lim := image.Limits{MaxPixels: d.set.lim.ImagePixels(), MaxScanPixels: d.set.lim.MaxJPEGScanPixels}
	p, err := image.Shown(ctx, data, lim)
	if err != nil {
		return nil, fmt.Errorf("decode the picture to draw on: %w", err)
	}
	return Canvas(p)
}

// Canvas is a canvas over p, a picture its preprocessing kept, which the
// canvas then owns: a JPEG's planes, painted on themselves (draw.Over); an
// opaque RGBA picture (a PNG's, known opaque without a look at its
// alphas), drawn on itself; any other picture converted to RGBA.
func Canvas(p *image.Picture) (*draw.Canvas, error) {
	if m, toRGBA, ok := p.Planes(); ok {
		return draw.Over(m, toRGBA)
	}
	if m, ok := p.Own(); ok {
		if p.Opaque() {
			return draw.NewOpaque(m)
		}
		if c, err := draw.New(m); err != nil || c.Opaque() {
			return c, err
		}
	}
	img, err := p.RGBA()
	if err != nil {
		return nil, fmt.Errorf("convert the picture to draw on: %w", err)
	}
	return draw.New(img)
}

// drawDetections draws one picture's detections, the worst first so that
// the best are on top: masks, boxes and labels, then keypoints.
func drawDetections(c *draw.Canvas, dets []detect.Detection) {
	for i := len(dets) - 1; i >= 0; i-- {
		det := dets[i]
		col := draw.Color(det.Index)
		if len(det.Polygon) > 2 {
			pts := make([][2]float64, len(det.Polygon))
			for k, p := range det.Polygon {
				pts[k] = [2]float64{float64(p.X), float64(p.Y)}
			}
			fill := col
			fill.A = 128
			c.Polygon(pts, fill, false)
		}
	}
	for i := len(dets) - 1; i >= 0; i-- {
		det := dets[i]
		col := draw.Color(det.Index)
		b := det.Box
		c.Box(float64(b.X1), float64(b.Y1), float64(b.X2), float64(b.Y2), col)
		c.Label(float64(b.X1), float64(b.Y1), fmt.Sprintf("%s %.2f", det.Label, det.Score), col)
		drawKeypoints(c, det.Keypoints)
	}
}

// drawKeypoints draws pose's keypoints, and COCO's skeleton between them
// when there are 17; a keypoint scoring under 0.5 is not drawn.
func drawKeypoints(c *draw.Canvas, kps []detect.Keypoint) {
	if len(kps) == 0 {
		return
	}
	seen := func(k detect.Keypoint) bool {
		return !k.HasScore || k.Score >= 0.5 && !math.IsNaN(float64(k.X)+float64(k.Y))
	}
	if len(kps) == 17 {
		for i, l := range skeleton {
			a, b := kps[l[0]-1], kps[l[1]-1]
			if seen(a) && seen(b) {
				c.Line(float64(a.X), float64(a.Y), float64(b.X), float64(b.Y), c.Width, draw.PoseColor(limbColors[i]))
			}
		}
	}
	r := math.Max(c.Width*1.5, 3)
	for i, k := range kps {
		if seen(k) {
			col := draw.PoseColor(i)
			if len(kps) == 17 {
				col = draw.PoseColor(pointColors[i])
			}
			c.Dot(float64(k.X), float64(k.Y), r, col)
		}
	}
}
