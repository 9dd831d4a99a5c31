package pipeline

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/tensor"
)

// Paint draws the page reader's answer to one picture on that picture
// (c): each line's box outlined in the palette's colour of its place in
// reading order (draw.Color(i): the first line red), and its text on a
// band of that colour above the box, sized to the line (half its height,
// from 10 pixels to the picture's text size). The labels are drawn
// first, so that every box's outline shows whole. It is the page
// reader's codec.Painter.
func Paint(c *draw.Canvas, res core.Result) error {
	out, err := res.Tensor(0)
	if err != nil {
		return fmt.Errorf("draw the page: %w", err)
	}
	docs, ok := out.Data.([]string)
	if !ok || out.DType != tensor.String || len(docs) != 1 {
		return fmt.Errorf("draw the page: %s %s answered, want one page", tensor.FormatShape(out.Shape), out.DType)
	}
	var pg Page
	if err := json.Unmarshal([]byte(docs[0]), &pg); err != nil {
		return fmt.Errorf("draw the page: %w", err)
	}
	largest := c.Text
	for i, l := range pg.Lines {
		b := l.Box
		h := (math.Hypot(float64(b[3][0]-b[0][0]), float64(b[3][1]-b[0][1])) + math.Hypot(float64(b[2][0]-b[1][0]), float64(b[2][1]-b[1][1]))) / 2
		if err := c.SetTextSize(min(max(h/2, 10), largest)); err != nil {
			return err
		}
		c.Label(float64(b[0][0]), float64(b[0][1]), l.Text, draw.Color(i))
	}
	for i, l := range pg.Lines {
		pts := make([][2]float64, len(l.Box))
		for k, p := range l.Box {
			pts[k] = [2]float64{float64(p[0]), float64(p[1])}
		}
		c.Outline(pts, draw.Color(i))
	}
	return nil
}
