package codec

import (
	"context"
	"fmt"
	stdimage "image"
	"io"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
)

// Painter draws on c what res, a model's answer to one picture, says of
// it: the drawing of a model whose runner decodes its pictures itself
// (an input of core.InputSpec.Pictures: a pipeline), which no declared
// output describes. The runner's package knows what its answer means;
// whoever serves it hands its Painter to the codec (Codec.PaintWith).
type Painter func(c *draw.Canvas, res core.Result) error

// ownInput is the input whose runner decodes its pictures itself, and
// what draws its answers (nil: it cannot be drawn).
type ownInput struct {
	name  string
	index int
	paint Painter
}

// PaintWith has the model's answers drawn by p when the model takes its
// pictures through an input its runner decodes (core.InputSpec.Pictures);
// it returns c.
func (c *Codec) PaintWith(p Painter) *Codec {
	c.paint = p
	return c
}

// withOwnPictures adds to s (nil: a new Set) the input of info whose
// runner decodes its pictures itself, if there is one.
func withOwnPictures(s *Set, info core.ModelInfo, lim config.Limits, paint Painter) *Set {
	for k, in := range info.Inputs {
		if !in.Pictures {
			continue
		}
		if s == nil {
			s = &Set{lim: lim}
		}
		s.own = &ownInput{name: in.Name, index: k, paint: paint}
		break
	}
	return s
}

// PicturesInput is the index of the input that takes encoded pictures
// its runner decodes itself (core.InputSpec.Pictures), or -1: the
// protocols let its elements be as long as pictures, as an image
// input's.
func (s *Set) PicturesInput() int {
	if s == nil || s.own == nil {
		return -1
	}
	return s.own.index
}

// Drawable reports whether a request may ask for its picture drawn on:
// a model with one image input and decoded outputs, or whose runner
// decodes its pictures itself and has a Painter.
func (s *Set) Drawable() bool {
	if s == nil {
		return false
	}
	if s.own != nil {
		return s.own.paint != nil
	}
	return len(s.images) == 1 && len(s.outputs) > 0
}

// SentPictures records the pictures a request sends to the input whose
// runner decodes them itself (PicturesInput), each as its element
// carries it (the file, or its base64): the protocol calls it before the
// run, for CheckDraw and SentType.
func (d *Decoding) SentPictures(pics []string) {
	if d == nil {
		return
	}
	d.ownCount = len(pics)
	if len(pics) == 1 {
		d.ownData = PictureBytes([]byte(pics[0]))
	}
}

// Keeping reports whether ctx's request asks for its picture drawn on
// (KeepPictures): a runner that decodes its pictures itself then hands
// the one it decoded to KeepDecoded.
func Keeping(ctx context.Context) bool { return keeping(ctx) }

// KeepDecoded hands a picture that the runner decoded itself (RGB, as
// shown: image.Decode's) to ctx's request for its drawing, which then
// does not decode it again: Draw draws on it and gives its storage back
// to the pools. It reports whether it took px; when it did not (no
// drawing asked), the caller keeps px. What px holds is reserved from
// the request's budget before it is taken: an error is the budget's
// refusal, and px is not taken.
func KeepDecoded(ctx context.Context, px image.Pixels) (bool, error) {
	d, _ := ctx.Value(decodingKey{}).(*Decoding)
	if d == nil || !d.keep || d.set.PicturesInput() < 0 || px.C != 3 {
		return false, nil
	}
	if err := budget.Reserve(ctx, int64(len(px.Pix)), "to keep its picture for the drawing"); err != nil {
		return false, err
	}
	if d.ownKept != nil {
		d.ownKept.Free()
	}
	d.ownKept = &px
	return true, nil
}

// ownDrawable is drawable for a model whose runner decodes its pictures.
func (d *Decoding) ownDrawable() (int, []byte, error) {
	if d.set.own.paint == nil {
		return 0, nil, fmt.Errorf("draw answers the picture drawn on, and nothing draws what the model answers of input '%s'", d.set.own.name)
	}
	if d.ownCount != 1 {
		return 0, nil, fmt.Errorf("draw answers one picture drawn on, and the request sends %d: send one picture", d.ownCount)
	}
	return d.set.own.index, d.ownData, nil
}

// ownCanvas is the picture a runner that decodes its pictures drew on,
// in RGBA: the one it kept (KeepDecoded), or data decoded again when it
// kept none (an answer from the response cache). What the drawing holds
// (the picture in RGBA, and its encoding) is reserved first, as for an
// image input's.
func (d *Decoding) ownCanvas(ctx context.Context, data []byte) (*stdimage.RGBA, error) {
	if px := d.ownKept; px != nil {
		d.ownKept = nil
		defer px.Free()
		if err := budget.Reserve(ctx, int64(px.W)*int64(px.H)*12, "to draw its picture"); err != nil {
			return nil, err
		}
		return px.RGBA(), nil
	}
	lim := image.Limits{MaxPixels: d.set.lim.ImagePixels(), MaxScanPixels: d.set.lim.MaxJPEGScanPixels}
	w, h, err := image.Size(data, lim)
	if err != nil {
		return nil, &core.InputError{Input: d.set.own.name, Message: fmt.Sprintf("Input '%s': %v", d.set.own.name, err)}
	}
	if err := budget.Reserve(ctx, int64(w)*int64(h)*12, "to draw its picture"); err != nil {
		return nil, err
	}
	p, err := image.Shown(ctx, data, lim)
	if err != nil {
		return nil, fmt.Errorf("decode the picture to draw on: %w", err)
	}
	return p.RGBA()
}

// drawOwn draws res on the request's picture with the runner's Painter
// and encodes it as mediaType.
func (d *Decoding) drawOwn(ctx context.Context, res core.Result, w io.Writer, mediaType string) error {
	_, data, err := d.ownDrawable()
	if err != nil {
		return &core.InputError{Message: err.Error()}
	}
	img, err := d.ownCanvas(ctx, data)
	if err != nil {
		return err
	}
	c, err := draw.New(img)
	if err != nil {
		return err
	}
	if err := d.set.own.paint(c, res); err != nil {
		return err
	}
	return c.Encode(w, mediaType)
}
