package detect

import (
	"fmt"
	"math"

	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

// output is a detector's output, read as float32.
type output struct {
	layout Layout
	n      int
	// rows and width: yolov8 has width rows of rows (anchors) values per
	// item, the others rows rows of width values.
	rows, width int
	data        []float32
}

// floats32 returns t's elements as float32: its own slice for float32,
// a converted copy for float16, bfloat16 and float64.
func floats32(t *tensor.Tensor, what string) ([]float32, error) {
	if t == nil {
		return nil, fmt.Errorf("no %s tensor", what)
	}
	switch d := t.Data.(type) {
	case []float32:
		if t.DType == tensor.Float32 {
			return d, nil
		}
	case []float64:
		if t.DType == tensor.Float64 {
			out := make([]float32, len(d))
			for i, v := range d {
				out[i] = float32(v)
			}
			return out, nil
		}
	case []uint16:
		if t.DType == tensor.Float16 || t.DType == tensor.BFloat16 {
			conv := tensor.Float16ToFloat32
			if t.DType == tensor.BFloat16 {
				conv = tensor.BFloat16ToFloat32
			}
			out := make([]float32, len(d))
			for i, v := range d {
				out[i] = conv(v)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s of type %s: want float32, float16, bfloat16 or float64", what, t.DType)
}

// checkLen refuses data that does not fill shape.
func checkLen(shape []int64, n int, what string) error {
	want := int64(1)
	for _, d := range shape {
		if d < 0 || d > math.MaxInt32 || want > math.MaxInt64/max(d, 1) {
			return fmt.Errorf("%s of shape %s: unusable dimensions", what, tensor.FormatShape(shape))
		}
		want *= d
	}
	if want != int64(n) {
		return fmt.Errorf("%s of shape %s holds %d values, want %d", what, tensor.FormatShape(shape), n, want)
	}
	return nil
}

// readOutput checks the output against the head and reads it.
func readOutput(t *tensor.Tensor, h Head) (*output, error) {
	data, err := floats32(t, "output")
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 3 {
		return nil, fmt.Errorf("output of shape %s: want %s", tensor.FormatShape(t.Shape), h.Shape())
	}
	if err := checkLen(t.Shape, len(data), "output"); err != nil {
		return nil, err
	}
	o := &output{layout: h.Layout, n: int(t.Shape[0]), rows: int(t.Shape[1]), width: int(t.Shape[2]), data: data}
	if h.Layout == YOLOv8 {
		o.rows, o.width = o.width, o.rows
	}
	if o.width != h.Width() {
		return nil, fmt.Errorf("output of shape %s: want %s", tensor.FormatShape(t.Shape), h.Shape())
	}
	return o, nil
}

// Shape is the output's shape as the head takes it, for messages.
func (h Head) Shape() string {
	w := h.Width()
	if h.Layout == YOLOv8 {
		return fmt.Sprintf("[N, %d, anchors] (%s)", w, h.Layout)
	}
	what := map[Layout]string{YOLOv5: "anchors", End2End: "boxes", RTDETR: "queries"}[h.Layout]
	return fmt.Sprintf("[N, %s, %d] (%s)", what, w, h.Layout)
}

// at is value j of row r of item i.
func (o *output) at(i, r, j int) float32 {
	if o.layout == YOLOv8 {
		return o.data[(i*o.width+j)*o.rows+r]
	}
	return o.data[(i*o.rows+r)*o.width+j]
}

// extras are the last n values of row r of item i (mask coefficients or
// keypoints).
func (o *output) extras(i, r, n int) []float32 {
	out := make([]float32, n)
	for k := range out {
		out[k] = o.at(i, r, o.width-n+k)
	}
	return out
}

// coefficients are the mask coefficients of row r of item i: YOLOv5's
// times the row's objectness, as its non_max_suppression multiplies
// every column after the objectness by it.
func (o *output) coefficients(i, r, n int) []float32 {
	v := o.extras(i, r, n)
	if o.layout == YOLOv5 {
		obj := o.at(i, r, 4)
		for k := range v {
			v[k] *= obj
		}
	}
	return v
}

// candidate is a box that passed the confidence threshold: its corners in
// the input's pixels, score and class, and its row in the output.
type candidate struct {
	box   [4]float32
	score float32
	class int32
	row   int
}

// xywh2xyxy is Ultralytics' conversion, in float32.
func xywh2xyxy(x, y, w, h float32) [4]float32 {
	dw, dh := w/2, h/2
	return [4]float32{x - dw, y - dh, x + dw, y + dh}
}

// wanted reports whether class c passes the classes filter.
func wanted(classes []int, c int32) bool {
	if classes == nil {
		return true
	}
	for _, k := range classes {
		if int32(k) == c {
			return true
		}
	}
	return false
}

// candidates are item i's boxes over the confidence threshold, in row
// order, of the classes asked for, as Ultralytics' non_max_suppression
// (and RT-DETR's and end-to-end models' post-processing) selects them.
func (o *output) candidates(i int, h Head, p Params, f image.Frame) []candidate {
	switch o.layout {
	case YOLOv8:
		return o.yolov8(i, h.Classes, p)
	case YOLOv5:
		return o.yolov5(i, h.Classes, p)
	case End2End:
		return o.end2end(i, p)
	}
	return o.rtdetr(i, h.Classes, p, f)
}

// yolov8 reads [4+classes(+extra), anchors]: the best class of each
// anchor, a pass over the class rows in memory order; an anchor with a
// NaN score is none (torch's amax propagates NaN).
func (o *output) yolov8(i, classes int, p Params) []candidate {
	A := o.rows
	base := o.data[i*o.width*A : (i+1)*o.width*A]
	best := make([]float32, A)
	cls := make([]int32, A)
	copy(best, base[4*A:5*A])
	for c := 1; c < classes; c++ {
		row := base[(4+c)*A : (5+c)*A]
		for a, v := range row {
			if b := best[a]; b == b && (v > b || v != v) {
				best[a], cls[a] = v, int32(c)
			}
		}
	}
	var out []candidate
	for a, s := range best {
		if float64(s) > p.Confidence && wanted(p.Classes, cls[a]) {
			box := xywh2xyxy(base[a], base[A+a], base[2*A+a], base[3*A+a])
			out = append(out, candidate{box: box, score: s, class: cls[a], row: a})
		}
	}
	return out
}

// yolov5 reads [anchors, 5+classes(+extra)]: objectness over the
// threshold, then the best of objectness × class score over it.
func (o *output) yolov5(i, classes int, p Params) []candidate {
	var out []candidate
	for a := range o.rows {
		row := o.data[(i*o.rows+a)*o.width : (i*o.rows+a+1)*o.width]
		obj := row[4]
		if !(float64(obj) > p.Confidence) {
			continue
		}
		best, cls := float32(math.NaN()), int32(0)
		for c := range classes {
			v := row[5+c] * obj
			if c == 0 || best == best && (v > best || v != v) {
				best, cls = v, int32(c)
			}
		}
		if float64(best) > p.Confidence && wanted(p.Classes, cls) {
			out = append(out, candidate{box: xywh2xyxy(row[0], row[1], row[2], row[3]), score: best, class: cls, row: a})
		}
	}
	return out
}

// end2end reads [K, 6(+extra)]: corners, score and class.
func (o *output) end2end(i int, p Params) []candidate {
	var out []candidate
	for k := range o.rows {
		row := o.data[(i*o.rows+k)*o.width : (i*o.rows+k+1)*o.width]
		c := row[5]
		cls := int32(-1)
		if c >= 0 && c < math.MaxInt32 {
			cls = int32(c)
		}
		if float64(row[4]) > p.Confidence && wanted(p.Classes, cls) {
			out = append(out, candidate{box: [4]float32{row[0], row[1], row[2], row[3]}, score: row[4], class: cls, row: k})
		}
	}
	return out
}

// rtdetr reads [K, 4+classes]: centre boxes normalised to the input,
// scaled to its pixels (f's input size; 1 when unknown).
func (o *output) rtdetr(i, classes int, p Params, f image.Frame) []candidate {
	sx, sy := float32(max(f.InputWidth, 1)), float32(max(f.InputHeight, 1))
	var out []candidate
	for k := range o.rows {
		row := o.data[(i*o.rows+k)*o.width : (i*o.rows+k+1)*o.width]
		best, cls := row[4], int32(0)
		for c := 1; c < classes; c++ {
			if v := row[4+c]; best == best && (v > best || v != v) {
				best, cls = v, int32(c)
			}
		}
		if float64(best) > p.Confidence && wanted(p.Classes, cls) {
			b := xywh2xyxy(row[0], row[1], row[2], row[3])
			b = [4]float32{b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy}
			out = append(out, candidate{box: b, score: best, class: cls, row: k})
		}
	}
	return out
}

// toBox maps a box of the input onto the picture, clipped to it, as
// Ultralytics' scale_boxes and clip_boxes do (in float32).
func toBox(f image.Frame, b [4]float32) Box {
	x1, y1 := toPoint(f, b[0], b[1])
	x2, y2 := toPoint(f, b[2], b[3])
	return Box{x1, y1, x2, y2}
}

// toPoint maps a point of the input onto the picture, clipped to it.
func toPoint(f image.Frame, x, y float32) (float32, float32) {
	px := (x - float32(f.OffsetX)) / float32(f.ScaleX)
	py := (y - float32(f.OffsetY)) / float32(f.ScaleY)
	if f.Width > 0 {
		px = clamp(px, float32(f.Width))
	}
	if f.Height > 0 {
		py = clamp(py, float32(f.Height))
	}
	return px, py
}

// clamp is torch's clamp(v, 0, hi): NaN stays NaN.
func clamp(v, hi float32) float32 {
	if v < 0 {
		return 0
	}
	if v > hi {
		return hi
	}
	return v
}
