package detect

import (
	"fmt"
	"strconv"

	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

// Layout is how a detector's output lays out its boxes.
type Layout string

// The layouts.
const (
	// YOLOv8 is [N, 4+classes(+extra), anchors]: centre x, y, width,
	// height, then the class scores, one column per anchor (YOLOv8, v9,
	// v11, v12).
	YOLOv8 Layout = "yolov8"
	// YOLOv5 is [N, anchors, 5+classes(+extra)]: centre x, y, width,
	// height, objectness, then the class scores; a box's confidence is
	// objectness × class score.
	YOLOv5 Layout = "yolov5"
	// End2End is [N, K, 6(+extra)]: x1, y1, x2, y2, score, class, already
	// suppressed (YOLOv10, YOLO26, exports with nms=True).
	End2End Layout = "end2end"
	// RTDETR is [N, K, 4+classes]: centre boxes normalised to the input's
	// size, then the class scores, with no suppression.
	RTDETR Layout = "rtdetr"
)

// Layouts lists the layouts.
func Layouts() []Layout { return []Layout{YOLOv8, YOLOv5, End2End, RTDETR} }

// Task is what a detection output answers besides boxes.
type Task string

// The tasks.
const (
	Detect  Task = "detect"
	Segment Task = "segment"
	Pose    Task = "pose"
)

// Head is what one row of a detector's output holds.
type Head struct {
	Layout  Layout
	Task    Task
	Classes int
	// Masks is the mask coefficients per box (segment).
	Masks int
	// Keypoints and KeypointDims (2: x, y; 3: and a score) are pose's.
	Keypoints, KeypointDims int
}

// extra is the number of values a row holds after its box and scores.
func (h Head) extra() int { return h.Masks + h.Keypoints*h.KeypointDims }

// Width is the length of one box's row in the output: the dimension the
// layout gives to a box's values.
func (h Head) Width() int {
	switch h.Layout {
	case YOLOv5:
		return 5 + h.Classes + h.extra()
	case End2End:
		return 6 + h.extra()
	case RTDETR:
		return 4 + h.Classes
	}
	return 4 + h.Classes + h.extra()
}

// Params are one decoding's settings: Ultralytics' predict arguments.
type Params struct {
	// Confidence is the least score kept: a box is kept when its score is
	// strictly greater.
	Confidence float64
	// IoU is the overlap above which suppression drops the lesser box.
	IoU float64
	// MaxDet is the most boxes per picture.
	MaxDet int
	// Agnostic suppresses boxes of different classes too.
	Agnostic bool
	// Classes keeps only these classes; nil keeps every class.
	Classes []int
}

// Defaults are Ultralytics' defaults: confidence 0.25, IoU 0.7, at most
// 300 boxes, class-aware suppression, every class.
func Defaults() Params { return Params{Confidence: 0.25, IoU: 0.7, MaxDet: 300} }

// Ultralytics' constants: the class offset of batched suppression
// (max_wh) and the most candidates suppression takes (max_nms).
const (
	maxWH  = 7680
	maxNMS = 30000
)

// Box is a box's corners, in picture pixels.
type Box struct{ X1, Y1, X2, Y2 float32 }

// Point is a point of a polygon, in picture pixels.
type Point struct{ X, Y float32 }

// Keypoint is one keypoint in picture pixels, with its score when the
// model gives one.
type Keypoint struct {
	X, Y     float32
	Score    float32
	HasScore bool
}

// Detection is one box and what goes with it.
type Detection struct {
	Label string
	Index int
	Score float32
	Box   Box
	// Polygon is the outer contour of the mask (segment).
	Polygon []Point
	// Mask is the mask as run-length encoding (segment, on request).
	Mask *RLE
	// Keypoints are pose's.
	Keypoints []Keypoint
}

// Decoder decodes a detector's outputs into each picture's detections.
type Decoder struct {
	Head Head
	// Labels name the classes by index; a class without one is named by
	// its index.
	Labels []string
}

// Request is what one decoding needs besides the outputs.
type Request struct {
	Params Params
	// Frames are where each item's picture went in the input; an item
	// without one is mapped as Fallback.
	Frames []image.Frame
	// Fallback is the frame of an item sent as a tensor: the input itself
	// (Identity of its size; a zero size clips nothing).
	Fallback image.Frame
	// RLE asks for each mask as run-length encoding too (segment).
	RLE bool
}

// label names class i.
func (d *Decoder) label(i int) string {
	if i >= 0 && i < len(d.Labels) {
		return d.Labels[i]
	}
	return strconv.Itoa(i)
}

// Decode returns the detections of each item of the batch, best first.
// out is the detector's output; protos the prototype masks [N, masks, h,
// w] of a segment head (nil otherwise).
func (d *Decoder) Decode(out, protos *tensor.Tensor, req *Request) ([][]Detection, error) {
	o, err := readOutput(out, d.Head)
	if err != nil {
		return nil, err
	}
	var pm *protoMasks
	if d.Head.Task == Segment {
		if pm, err = readProtos(protos, d.Head.Masks, o.n); err != nil {
			return nil, err
		}
	}
	res := make([][]Detection, o.n)
	for i := range o.n {
		f := req.Fallback
		if i < len(req.Frames) {
			f = req.Frames[i]
		}
		res[i] = d.item(o, pm, i, f, req)
	}
	return res, nil
}

// item decodes item i, whose picture went in as f.
func (d *Decoder) item(o *output, pm *protoMasks, i int, f image.Frame, req *Request) []Detection {
	cands := o.candidates(i, d.Head, req.Params, f)
	switch d.Head.Layout {
	case YOLOv8, YOLOv5:
		cands = suppress(cands, req.Params)
	default:
		cands = best(cands, req.Params.MaxDet)
	}
	dets := make([]Detection, 0, len(cands))
	var ms *maskSpace
	if pm != nil {
		ms = newMaskSpace(pm, i, f, req.RLE)
	}
	for _, c := range cands {
		det := Detection{Label: d.label(int(c.class)), Index: int(c.class), Score: c.score, Box: toBox(f, c.box)}
		if ms != nil {
			poly, rle, ok := ms.mask(o.coefficients(i, c.row, d.Head.Masks), c.box)
			if !ok {
				continue // an empty mask: Ultralytics drops the box
			}
			det.Polygon, det.Mask = poly, rle
		}
		if d.Head.Task == Pose {
			det.Keypoints = keypoints(o.extras(i, c.row, d.Head.Keypoints*d.Head.KeypointDims), d.Head.KeypointDims, f)
		}
		dets = append(dets, det)
	}
	return dets
}

// keypoints maps a row's keypoints onto the picture, clipped to it, as
// Ultralytics' scale_coords does.
func keypoints(v []float32, dims int, f image.Frame) []Keypoint {
	out := make([]Keypoint, len(v)/dims)
	for k := range out {
		x, y := toPoint(f, v[k*dims], v[k*dims+1])
		out[k] = Keypoint{X: x, Y: y}
		if dims == 3 {
			out[k].Score, out[k].HasScore = v[k*dims+2], true
		}
	}
	return out
}

// Check refuses params a decoding cannot take, naming the setting.
func (p Params) Check() error {
	switch {
	case !(p.Confidence >= 0 && p.Confidence <= 1):
		return fmt.Errorf("confidence %v: want a number from 0 to 1", p.Confidence)
	case !(p.IoU >= 0 && p.IoU <= 1):
		return fmt.Errorf("iou %v: want a number from 0 to 1", p.IoU)
	case p.MaxDet < 1:
		return fmt.Errorf("max_det %d: want 1 or more", p.MaxDet)
	}
	return nil
}
