package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/codec/page"
	"github.com/svc-dev/svc/core/tensor"
)

// OCRSettings are the page reader's settings; DefaultOCR gives
// PaddleOCR's.
type OCRSettings struct {
	// LimitSideLen and LimitType size the detector's input
	// (DetResizeForTest): 960, max.
	LimitSideLen int
	LimitType    page.LimitType
	// DB reads the detector's map (DBPostProcess).
	DB page.DB
	// ClsThresh: a crop the classifier labels 180 with a score over it is
	// turned over (cls_thresh 0.9).
	ClsThresh float64
	// ClsBatch and RecBatch are the crops per run of the classifier and
	// the recogniser, sorted by aspect ratio (cls_batch_num 6; svc reads
	// one line a run where PaddleOCR's rec_batch_num is 6: on CPU a run
	// of six lines costs PP-OCRv4's recogniser 1.6 times as much a line as
	// one line alone, docs/ocr.md).
	ClsBatch, RecBatch int
	// ClsWidth is the classifier's input width (cls_image_shape 3,48,192).
	ClsWidth int
	// RecWidth is the narrowest recogniser batch (rec_image_shape
	// 3,48,320): a batch is 48 × max(RecWidth, 48 × its widest ratio).
	RecWidth int
	// TextScore drops the lines read with a lower score (drop_score 0.5).
	TextScore float64
	// Classify runs the classifier (use_angle_cls) when there is one.
	Classify bool
}

// DefaultOCR is PaddleOCR's configuration of PP-OCR's TextSystem, but
// for RecBatch.
var DefaultOCR = OCRSettings{
	LimitSideLen: 960, LimitType: page.LimitMax, DB: page.DefaultDB,
	ClsThresh: 0.9, ClsBatch: 6, RecBatch: 1, ClsWidth: 192, RecWidth: 320,
	TextScore: 0.5, Classify: true,
}

// lineHeight is the classifier's and the recogniser's input height.
const lineHeight = 48

// Stages are the page reader's models, each behind the Runner that serves
// it alone. Classify may be nil.
type Stages struct {
	Detect, Classify, Recognize core.Runner
	// Labels are the recogniser's characters (ppocr_keys_v1.txt), without
	// the blank; the space is added when its output has room for it.
	Labels []string
}

// OCR is the page reader: safe for concurrent use.
type OCR struct {
	st  Stages
	set OCRSettings
	ctc decode.CTC
}

// StageError is a stage whose model is not what the stage needs.
type StageError struct {
	Stage string // detect, classify or recognize
	Msg   string
}

func (e *StageError) Error() string { return e.Stage + ": " + e.Msg }

// NewOCR checks that each stage's model takes and gives what the stage
// needs and returns the page reader.
func NewOCR(st Stages, set OCRSettings) (*OCR, error) {
	if st.Detect == nil {
		return nil, &StageError{Stage: "detect", Msg: "no model"}
	}
	if st.Recognize == nil {
		return nil, &StageError{Stage: "recognize", Msg: "no model"}
	}
	if err := checkPictureInput("detect", st.Detect, -1, -1); err != nil {
		return nil, err
	}
	if st.Classify != nil {
		if err := checkPictureInput("classify", st.Classify, lineHeight, int64(set.ClsWidth)); err != nil {
			return nil, err
		}
	}
	if err := checkPictureInput("recognize", st.Recognize, lineHeight, -1); err != nil {
		return nil, err
	}
	if len(st.Labels) == 0 {
		return nil, &StageError{Stage: "recognize", Msg: "no character list"}
	}
	if err := checkOutput("detect", st.Detect, 4, 1, 1, "a probability map [N, 1, H, W]"); err != nil {
		return nil, err
	}
	if st.Classify != nil {
		if err := checkOutput("classify", st.Classify, 2, 1, 2, "two classes (0, 180) [N, 2]"); err != nil {
			return nil, err
		}
	}
	classes := int64(len(st.Labels) + 2) // blank, characters, space
	if err := checkOutput("recognize", st.Recognize, 3, 2, classes, fmt.Sprintf("CTC scores [N, T, %d] (blank, %d characters, space)", classes, len(st.Labels))); err != nil {
		if err2 := checkOutput("recognize", st.Recognize, 3, 2, classes-1, ""); err2 != nil {
			return nil, err
		}
	}
	if set.ClsBatch <= 0 || set.RecBatch <= 0 || set.ClsWidth <= 0 || set.RecWidth <= 0 || set.LimitSideLen <= 0 {
		return nil, fmt.Errorf("ocr settings: batches, widths and limit_side_len must be positive")
	}
	return &OCR{st: st, set: set, ctc: decode.CTC{Labels: st.Labels}}, nil
}

// checkPictureInput checks that r takes one float32 [N, 3, H, W] picture
// (H and W fixed to h and w when these are not negative, or dynamic).
func checkPictureInput(stage string, r core.Runner, h, w int64) error {
	specs := r.Specs()
	if len(specs) != 1 {
		return &StageError{Stage: stage, Msg: fmt.Sprintf("model %q has %d inputs, want one picture", r.Info().Name, len(specs))}
	}
	s := specs[0]
	want := "[N, 3, H, W] float32"
	if h >= 0 {
		want = fmt.Sprintf("[N, 3, %d, W] float32", h)
		if w >= 0 {
			want = fmt.Sprintf("[N, 3, %d, %d] float32", h, w)
		}
	}
	bad := s.DType != tensor.Float32 || len(s.Shape) != 4 || (s.Shape[1] >= 0 && s.Shape[1] != 3) ||
		(h >= 0 && s.Shape[2] >= 0 && s.Shape[2] != h) || (w >= 0 && s.Shape[3] >= 0 && s.Shape[3] != w)
	if bad {
		return &StageError{Stage: stage, Msg: fmt.Sprintf("model %q takes %s %s, want %s", r.Info().Name, s.Name, describeSpec(s), want)}
	}
	return nil
}

// checkOutput checks that r's first output is float32 of the rank given,
// its axis axis of size n (or dynamic).
func checkOutput(stage string, r core.Runner, rank, axis int, n int64, want string) error {
	outs := r.Info().Outputs
	if len(outs) == 0 {
		return &StageError{Stage: stage, Msg: fmt.Sprintf("model %q has no output, want %s", r.Info().Name, want)}
	}
	o := outs[0]
	if o.Type != tensor.Float32.String() || len(o.Shape) != rank || (o.Shape[axis] >= 0 && o.Shape[axis] != n) {
		return &StageError{Stage: stage, Msg: fmt.Sprintf("model %q gives %s %s %s, want %s", r.Info().Name, o.Name, tensor.FormatShape(o.Shape), o.Type, want)}
	}
	return nil
}

func describeSpec(s tensor.Spec) string {
	return tensor.FormatShape(s.Shape) + " " + s.DType.String()
}

// Settings returns the page reader's settings.
func (o *OCR) Settings() OCRSettings { return o.set }

// Line is one line read on the page: its box (four corners clockwise from
// the top left, in the page's pixels), its text and its score.
type Line struct {
	Box   [4][2]int `json:"box"`
	Text  string    `json:"text"`
	Score float64   `json:"score"`
}

// Page is what the page reader answers for one picture: its lines in
// reading order, and their texts joined by newlines.
type Page struct {
	Lines []Line `json:"lines"`
	Text  string `json:"text"`
}

// Read decodes the picture once (after its header has passed lim) and
// reads it with set (the reader's settings with a request's overrides).
func (o *OCR) Read(ctx context.Context, data []byte, lim image.Limits, set OCRSettings) (Page, error) {
	px, err := image.Decode(ctx, data, 3, lim)
	if err != nil {
		return Page{}, err
	}
	defer px.Free()
	return o.ReadPixels(ctx, px, set)
}

// ReadPixels reads an RGB picture: detection, crops, orientation (when
// set.Classify and there is a classifier), recognition.
func (o *OCR) ReadPixels(ctx context.Context, px image.Pixels, set OCRSettings) (Page, error) {
	pg := Page{Lines: []Line{}}
	if px.C != 3 {
		return pg, fmt.Errorf("ocr: a picture of %d channels, want 3", px.C)
	}
	boxes, err := o.detect(ctx, px, set)
	if err != nil || len(boxes) == 0 {
		return pg, err
	}
	img := page.Image{Pix: px.Pix, W: px.W, H: px.H, C: 3}
	crops := make([]page.Image, 0, len(boxes))
	defer func() {
		for _, c := range crops {
			tensor.PutSlice(c.Pix)
		}
	}()
	kept := boxes[:0]
	for _, b := range boxes {
		c := page.CropPooled(img, b.Quad, pooled{})
		if c.W == 0 || c.H == 0 {
			continue
		}
		crops = append(crops, c)
		kept = append(kept, b)
	}
	if set.Classify && o.st.Classify != nil {
		if err := o.classify(ctx, crops, set); err != nil {
			return pg, err
		}
	}
	texts, err := o.recognize(ctx, crops, set)
	if err != nil {
		return pg, err
	}
	var sb strings.Builder
	for i, t := range texts {
		if t.Score < set.TextScore {
			continue
		}
		var l Line
		for k, p := range kept[i].Quad {
			l.Box[k] = [2]int{p.X, p.Y}
		}
		l.Text, l.Score = t.Text, t.Score
		if len(pg.Lines) > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(t.Text)
		pg.Lines = append(pg.Lines, l)
	}
	pg.Text = sb.String()
	return pg, nil
}

// detect runs the detector on the page resized and normalised as
// PaddleOCR does (DetResizeForTest, then NormalizeImage on the BGR
// picture), and returns the boxes filtered and in reading order.
func (o *OCR) detect(ctx context.Context, px image.Pixels, set OCRSettings) ([]page.Box, error) {
	h, w := page.DetectorSize(px.H, px.W, set.LimitSideLen, set.LimitType)
	rs, err := image.Resize(px, w, h, image.Bilinear)
	if err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	x := tensor.MakeSlice[float32](3 * w * h)[:3*w*h]
	mean := [3]float32{0.485, 0.456, 0.406}
	std := [3]float32{0.229, 0.224, 0.225}
	var lut [3][256]float32
	for c := range 3 {
		for v := range 256 {
			lut[c][v] = (float32(v)/255 - mean[c]) / std[c]
		}
	}
	n := w * h
	for i := range n {
		p := rs.Pix[i*3 : i*3+3]
		// BGR channel c is RGB channel 2-c.
		x[i], x[n+i], x[2*n+i] = lut[0][p[2]], lut[1][p[1]], lut[2][p[0]]
	}
	rs.Free()
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 3, int64(h), int64(w)}, Data: x}}
	defer tensor.RecycleAll(in)
	res, err := o.st.Detect.Predict(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	defer res.Release()
	out, err := res.Tensor(0)
	if err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	pred, ok := out.Data.([]float32)
	if !ok || len(out.Shape) != 4 || out.Shape[2] != int64(h) || out.Shape[3] != int64(w) {
		return nil, &StageError{Stage: "detect", Msg: fmt.Sprintf("output %s %s for an input of %d×%d: want a float32 map [1, 1, %d, %d]",
			tensor.FormatShape(out.Shape), out.DType, w, h, h, w)}
	}
	boxes := page.Filter(set.DB.Boxes(pred[:w*h], w, h, px.W, px.H), px.W, px.H)
	page.Sort(boxes)
	return boxes, nil
}

// pooled lends crops storage from the tensor pools.
type pooled struct{}

func (pooled) Get(n int) []uint8 { return tensor.MakeSlice[uint8](n)[:n] }
func (pooled) Put(b []uint8)     { tensor.PutSlice(b) }

// byRatio returns the crops' indices sorted by width / height, as
// PaddleOCR's np.argsort of the crops' ratios orders them.
func byRatio(crops []page.Image) []int {
	idx := make([]int, len(crops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra := float64(crops[a].W) / float64(crops[a].H)
		rb := float64(crops[b].W) / float64(crops[b].H)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	return idx
}

// lineTensor is PaddleOCR's resize_norm_img for the classifier and the
// recogniser: each crop resized to height 48 and width
// min(ceil(48 × ratio), width), bilinear, normalised to [-1, 1] in BGR
// order, and padded with zeros to width.
func lineTensor(crops []page.Image, idx []int, width int) (*tensor.Tensor, error) {
	n, plane := len(idx), lineHeight*width
	x := tensor.MakeSlice[float32](n * 3 * plane)[:n*3*plane]
	clear(x)
	var lut [256]float32
	for v := range 256 {
		lut[v] = (float32(v)/255 - 0.5) / 0.5
	}
	for b, i := range idx {
		c := crops[i]
		rw := width
		if cw := int(math.Ceil(lineHeight * (float64(c.W) / float64(c.H)))); cw <= width {
			rw = cw
		}
		rs, err := image.Resize(image.Pixels{Pix: c.Pix, W: c.W, H: c.H, C: 3}, rw, lineHeight, image.Bilinear)
		if err != nil {
			tensor.PutSlice(x)
			return nil, err
		}
		item := x[b*3*plane:]
		for y := range lineHeight {
			row := rs.Pix[y*rw*3:]
			for xx := range rw {
				p := row[xx*3 : xx*3+3]
				o := y*width + xx
				item[o], item[plane+o], item[2*plane+o] = lut[p[2]], lut[p[1]], lut[p[0]]
			}
		}
		rs.Free()
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(n), 3, lineHeight, int64(width)}, Data: x}, nil
}

// classify runs the orientation classifier on the crops in batches sorted
// by ratio, as many at once as the classifier's scheduler runs, and turns
// over those labelled 180 with a score over ClsThresh (TextClassifier).
func (o *OCR) classify(ctx context.Context, crops []page.Image, set OCRSettings) error {
	batches := chunks(byRatio(crops), set.ClsBatch)
	return each(ctx, len(batches), parallel(o.st.Classify), func(ctx context.Context, b int) error {
		batch := batches[b]
		t, err := lineTensor(crops, batch, set.ClsWidth)
		if err != nil {
			return fmt.Errorf("classify: %w", err)
		}
		probs, err := o.run(ctx, "classify", o.st.Classify, t, len(batch))
		if err != nil {
			return err
		}
		if len(probs)%len(batch) != 0 || len(probs)/len(batch) != 2 {
			return &StageError{Stage: "classify", Msg: fmt.Sprintf("%d scores for %d crops: want two classes (0, 180) a crop", len(probs), len(batch))}
		}
		for k, i := range batch {
			p0, p180 := probs[2*k], probs[2*k+1]
			if p180 > p0 && float64(p180) > set.ClsThresh {
				rotate180(crops[i])
			}
		}
		return nil
	})
}

// chunks cuts idx into runs of at most n.
func chunks(idx []int, n int) [][]int {
	var out [][]int
	for beg := 0; beg < len(idx); beg += n {
		out = append(out, idx[beg:min(beg+n, len(idx))])
	}
	return out
}

// parallel is how many runs r takes at once: its scheduler's run slots
// (core.SchedStats.Sessions), or one for a Runner that does not say.
func parallel(r core.Runner) int {
	if s, ok := r.(interface{ Stats() core.SchedStats }); ok {
		return max(1, s.Stats().Sessions)
	}
	return 1
}

// each calls do for 0 … n-1, at most par at once (a page's batches, so
// that they use every run slot of their stage rather than queue behind
// one another, where the scheduler would merge them into one longer run),
// and returns the first error; once one fails, those not yet begun are
// not begun.
func each(ctx context.Context, n, par int, do func(context.Context, int) error) error {
	if par <= 1 || n <= 1 {
		for k := range n {
			if err := do(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for k := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return do(ctx, k) })
	}
	return g.Wait()
}

// run predicts one batch through r and returns a copy of its first
// output's floats.
func (o *OCR) run(ctx context.Context, stage string, r core.Runner, t *tensor.Tensor, n int) ([]float32, error) {
	in := []*tensor.Tensor{t}
	defer tensor.RecycleAll(in)
	res, err := r.Predict(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stage, err)
	}
	defer res.Release()
	out, err := res.Tensor(0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stage, err)
	}
	f, ok := out.Data.([]float32)
	if !ok || len(out.Shape) == 0 || out.Shape[0] != int64(n) {
		return nil, &StageError{Stage: stage, Msg: fmt.Sprintf("output %s %s for %d crops: want float32 [%d, ...]", tensor.FormatShape(out.Shape), out.DType, n, n)}
	}
	return slices.Clone(f), nil
}

// rotate180 is cv2.rotate(img, ROTATE_180), in place.
func rotate180(c page.Image) {
	n := c.W * c.H
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		a, b := c.Pix[i*3:i*3+3], c.Pix[j*3:j*3+3]
		a[0], a[1], a[2], b[0], b[1], b[2] = b[0], b[1], b[2], a[0], a[1], a[2]
	}
}

// recognize reads the crops in batches sorted by ratio, each padded to
// 48 × max(RecWidth, 48 × its widest ratio) (TextRecognizer), as many at
// once as the recogniser's scheduler runs, and returns the texts in the
// crops' order.
func (o *OCR) recognize(ctx context.Context, crops []page.Image, set OCRSettings) ([]decode.Text, error) {
	texts := make([]decode.Text, len(crops))
	batches := chunks(byRatio(crops), set.RecBatch)
	err := each(ctx, len(batches), parallel(o.st.Recognize), func(ctx context.Context, b int) error {
		batch := batches[b]
		ratio := float64(set.RecWidth) / lineHeight
		for _, i := range batch {
			ratio = max(ratio, float64(crops[i].W)/float64(crops[i].H))
		}
		t, err := lineTensor(crops, batch, int(lineHeight*ratio))
		if err != nil {
			return fmt.Errorf("recognize: %w", err)
		}
		return o.readBatch(ctx, t, batch, texts)
	})
	if err != nil {
		return nil, err
	}
	return texts, nil
}

// readBatch runs the recogniser on one batch and decodes its CTC output
// into texts at the batch's indices.
func (o *OCR) readBatch(ctx context.Context, t *tensor.Tensor, batch []int, texts []decode.Text) error {
	in := []*tensor.Tensor{t}
	defer tensor.RecycleAll(in)
	res, err := o.st.Recognize.Predict(ctx, in)
	if err != nil {
		return fmt.Errorf("recognize: %w", err)
	}
	defer res.Release()
	out, err := res.Tensor(0)
	if err != nil {
		return fmt.Errorf("recognize: %w", err)
	}
	got, err := o.ctc.Decode(out)
	if err != nil {
		return &StageError{Stage: "recognize", Msg: err.Error()}
	}
	if len(got) != len(batch) {
		return &StageError{Stage: "recognize", Msg: fmt.Sprintf("%d texts for %d crops", len(got), len(batch))}
	}
	for k, i := range batch {
		texts[i] = got[k]
	}
	return nil
}
