package codec

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/detect"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

// The request settings of the decoded outputs: the /predict query's
// parameters and the Open Inference Protocol's request parameters.
const (
	ParamConfidence = "confidence"
	ParamIoU        = "iou"
	ParamMaxDet     = "max_det"
	ParamClasses    = "classes"
	ParamRLE        = "rle"
)

// DetectionParams lists the request settings of detection outputs.
func DetectionParams() []string {
	return []string{ParamConfidence, ParamIoU, ParamMaxDet, ParamClasses, ParamRLE}
}

// Decoding is one request's decoding of the model's outputs: the
// settings it overrides, and where its pictures went (recorded by
// Set.Tensors when ctx carries it: WithDecoding). A nil *Decoding
// overrides nothing and knows no pictures.
type Decoding struct {
	set *Set
	// frames and pictures are by image input index.
	frames   map[int][]image.Frame
	pictures map[int][][]byte
	// keep asks Set.Tensors to keep the decoded pictures for a drawing
	// (KeepPictures); kept are they, by image input index, until Draw
	// takes them.
	keep bool
	kept map[int][]*image.Picture
	// The pictures sent to an input whose runner decodes them itself
	// (SentPictures): how many, the one's encoded bytes, and the one
	// the runner kept for the drawing (KeepDecoded; own.go).
	ownCount int
	ownData  []byte
	ownKept  *image.Pixels
	// The overrides: nil, or what the request says.
	confidence, iou *float64
	maxDet          int
	classes         []int
	classesSet      bool
	rle             bool
}

// NewDecoding starts a request's decoding.
func (s *Set) NewDecoding() *Decoding {
	return &Decoding{set: s}
}

type decodingKey struct{}

// WithDecoding returns ctx carrying d, for Set.Tensors to record where
// the pictures went.
func WithDecoding(ctx context.Context, d *Decoding) context.Context {
	if d == nil {
		return ctx
	}
	return context.WithValue(ctx, decodingKey{}, d)
}

// KeepPictures asks that the request's pictures, once decoded for the
// model, be kept for Draw, which then does not decode them again: the
// protocol calls it, before the pictures are decoded, for a request that
// asks for a drawing. What they hold is reserved with the decoding's
// memory (Set.Tensors), against the request's ticket, until the request
// ends.
func (d *Decoding) KeepPictures() {
	if d != nil {
		d.keep = true
	}
}

// keeping reports whether ctx's decoding asks Set.Tensors to keep the
// decoded pictures (KeepPictures).
func keeping(ctx context.Context) bool {
	d, _ := ctx.Value(decodingKey{}).(*Decoding)
	return d != nil && d.keep
}

// record keeps where input k's pictures went, and the pictures: as sent,
// and as decoded when b kept them.
func recordPictures(ctx context.Context, k int, b *image.Batch, pictures [][]byte) {
	d, _ := ctx.Value(decodingKey{}).(*Decoding)
	if d == nil {
		return
	}
	if d.frames == nil {
		d.frames, d.pictures, d.kept = map[int][]image.Frame{}, map[int][][]byte{}, map[int][]*image.Picture{}
	}
	d.frames[k], d.pictures[k] = b.Frames(), pictures
	if d.keep {
		kept := make([]*image.Picture, len(pictures))
		for i := range kept {
			kept[i] = b.Kept(i)
		}
		d.kept[k] = kept
	}
}

// HasDetection reports whether the model has a detection output.
func (s *Set) HasDetection() bool {
	return s != nil && slices.ContainsFunc(s.outputs, (*Output).IsDetection)
}

// Consumed reports whether output i is read by a decoded output (a
// segment output's prototype masks): answered only raw, or when asked
// for by name.
func (s *Set) Consumed(i int) bool {
	if s == nil {
		return false
	}
	for _, o := range s.outputs {
		if o.det != nil && o.det.protos == i {
			return true
		}
	}
	return false
}

// SetParam sets one request setting from its text: confidence and iou a
// number from 0 to 1, max_det a whole number from 1, classes class
// indices separated by commas ("" for every class), rle true or false.
// Its error names the setting and what it takes; a model without a
// detection output takes none of them.
func (d *Decoding) SetParam(name, value string) error {
	if !d.set.HasDetection() {
		return fmt.Errorf("%s applies to detect, segment and pose outputs, and the model has none", name)
	}
	v := strings.TrimSpace(value)
	switch name {
	case ParamConfidence, ParamIoU:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%s takes a number from 0 to 1, got '%s'", name, clip(value))
		}
		if name == ParamConfidence {
			d.confidence = &f
		} else {
			d.iou = &f
		}
	case ParamMaxDet:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 30000 {
			return fmt.Errorf("%s takes a whole number from 1 to 30000, got '%s'", name, clip(value))
		}
		d.maxDet = n
	case ParamClasses:
		classes, err := d.parseClasses(v)
		if err != nil {
			return fmt.Errorf("%s takes class indices separated by commas (%s), got '%s'", name, d.classRange(), clip(value))
		}
		d.classes, d.classesSet = classes, true
	case ParamRLE:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s takes true or false, got '%s'", name, clip(value))
		}
		d.rle = b
	default:
		return fmt.Errorf("unknown setting %s", name)
	}
	return nil
}

// parseClasses reads "0,2,5"; "" is every class (nil).
func (d *Decoding) parseClasses(v string) ([]int, error) {
	if v == "" {
		return nil, nil
	}
	n := d.classCount()
	var out []int
	for part := range strings.SplitSeq(v, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || c < 0 || n > 0 && c >= n {
			return nil, fmt.Errorf("class %q", part)
		}
		out = append(out, c)
	}
	return out, nil
}

// classCount is the fewest classes of the detection outputs.
func (d *Decoding) classCount() int {
	n := math.MaxInt
	for _, o := range d.set.outputs {
		if o.det != nil {
			n = min(n, o.det.dec.Head.Classes)
		}
	}
	if n == math.MaxInt {
		return 0
	}
	return n
}

func (d *Decoding) classRange() string {
	if n := d.classCount(); n > 0 {
		return fmt.Sprintf("0 to %d", n-1)
	}
	return "0 or more"
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// params are o's settings with the request's overrides.
func (d *Decoding) params(o *Output) detect.Params {
	p := o.det.params
	if d == nil {
		return p
	}
	if d.confidence != nil {
		p.Confidence = *d.confidence
	}
	if d.iou != nil {
		p.IoU = *d.iou
	}
	if d.maxDet > 0 {
		p.MaxDet = d.maxDet
	}
	if d.classesSet {
		p.Classes = d.classes
	}
	return p
}

// detections decodes a detection output of res.
func (d *Decoding) detections(o *Output, res core.Result) ([][]detect.Detection, error) {
	t, err := res.Tensor(o.Index)
	if err != nil {
		return nil, o.wrap(err)
	}
	var protos *tensor.Tensor
	if o.det.protos >= 0 {
		if protos, err = res.Tensor(o.det.protos); err != nil {
			return nil, o.wrap(err)
		}
	}
	req := &detect.Request{Params: d.params(o), Fallback: o.det.fallback}
	if d != nil {
		req.RLE = d.rle
		req.Frames = d.frames[o.det.input]
	}
	dets, err := o.det.dec.Decode(t, protos, req)
	if err != nil {
		return nil, o.wrap(err)
	}
	return dets, nil
}

// AppendJSON appends decoded output o of res for the v1 API, with d's
// settings and pictures (d may be nil): per item, a top-k list of
// {"label","index","score"} (classify), one {"text","score"} (ctc), or
// the list of its detections (detect, segment, pose), in a JSON array
// over the batch.
func (d *Decoding) AppendJSON(dst []byte, o *Output, res core.Result) ([]byte, error) {
	if o.det != nil {
		dets, err := d.detections(o, res)
		if err != nil {
			return dst, err
		}
		return detect.AppendBatchJSON(dst, dets), nil
	}
	t, err := res.Tensor(o.Index)
	if err != nil {
		return dst, o.wrap(err)
	}
	return o.AppendJSON(dst, t)
}

// Strings is decoded output o of res as the Open Inference Protocol's
// BYTES tensor and its shape: Output.Strings for classify and ctc, [N]
// JSON lists of detections for detect, segment and pose.
func (d *Decoding) Strings(o *Output, res core.Result) ([]string, []int64, error) {
	if o.det == nil {
		t, err := res.Tensor(o.Index)
		if err != nil {
			return nil, nil, o.wrap(err)
		}
		return o.Strings(t)
	}
	dets, err := d.detections(o, res)
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, len(dets))
	for i, item := range dets {
		out[i] = string(detect.AppendJSON(nil, item))
	}
	return out, []int64{int64(len(out))}, nil
}

// Shape is the decoded output's shape as the Open Inference Protocol
// answers it: [-1, k] for classify, [-1] for the others.
func (o *Output) Shape() []int64 {
	if o.Kind == KindClassify {
		return []int64{-1, int64(o.TopK())}
	}
	return []int64{-1}
}

// captions are what a classify or ctc output says of each item, for a
// drawing: "label 0.93" per class, or the text.
func (o *Output) captions(t *tensor.Tensor) ([]string, error) {
	if o.Kind == KindClassify {
		items, err := o.classify.Decode(t)
		if err != nil {
			return nil, o.wrap(err)
		}
		out := make([]string, len(items))
		for i, item := range items {
			parts := make([]string, len(item))
			for j, c := range item {
				parts[j] = fmt.Sprintf("%s %.2f", c.Label, c.Score)
			}
			out[i] = o.Name + ": " + strings.Join(parts, ", ")
		}
		return out, nil
	}
	texts, err := o.texts(t)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(texts))
	for i, tx := range texts {
		out[i] = fmt.Sprintf("%s: %s (%.2f)", o.Name, tx.Text, tx.Score)
	}
	return out, nil
}
