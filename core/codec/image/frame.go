package image

import (
	"context"
	"fmt"
	"image"
	"math"
)

// Frame is where one picture went in the model's input: what a decoder
// needs to map what the model says of its input (boxes, keypoints, masks)
// back onto the picture the client sent, exactly as the picture was
// placed, not as a second computation would guess it.
//
// A point (x, y) of the input is ((x − OffsetX) / ScaleX, (y − OffsetY) /
// ScaleY) of the picture. For fit (the letterbox) the scale is Ultralytics'
// gain, min(input width / width, input height / height), on both axes, and
// the offsets are the padding the letterbox added on the left and at the
// top, whole pixels, as Ultralytics' scale_boxes undoes its LetterBox; for
// stretch, cover and height each axis has the scale its resize applied.
type Frame struct {
	// Width and Height are the picture's, as shown: after its EXIF
	// orientation.
	Width, Height int
	// InputWidth and InputHeight are the size of the picture in the
	// model's input tensor (the batch's width in height mode).
	InputWidth, InputHeight int
	// ScaleX and ScaleY are input pixels per picture pixel; OffsetX and
	// OffsetY where the picture's origin lies in the input.
	ScaleX, ScaleY, OffsetX, OffsetY float64
	// ResizedWidth and ResizedHeight are the size the picture was resized
	// to, and PlaceX, PlaceY where that resized picture's origin lies in
	// the input (negative where cover cropped it): the input's pixel
	// (PlaceX + i, PlaceY + j) is pixel (i, j) of the resized picture.
	ResizedWidth, ResizedHeight int
	PlaceX, PlaceY              int
}

// Identity is the frame of a model input of w×h pixels that is the
// picture itself (the client sent the tensor).
func Identity(w, h int) Frame {
	return Frame{Width: w, Height: h, InputWidth: w, InputHeight: h, ScaleX: 1, ScaleY: 1, ResizedWidth: w, ResizedHeight: h}
}

// ToPicture maps a point of the input onto the picture (not clipped).
func (f Frame) ToPicture(x, y float64) (float64, float64) {
	return (x - f.OffsetX) / f.ScaleX, (y - f.OffsetY) / f.ScaleY
}

// Frame is where a picture of w×h pixels (as shown) goes in the plan's
// input, for a batch whose tensor is batchWidth wide (the plan's width
// but in height mode with a dynamic width).
func (p *Plan) Frame(w, h, batchWidth int) Frame {
	W, H := batchWidth, p.height
	if p.width > 0 {
		W = p.width
	}
	g := p.place(w, h, W, H)
	f := Frame{
		Width: w, Height: h, InputWidth: W, InputHeight: H,
		ResizedWidth: g.rw, ResizedHeight: g.rh,
		PlaceX: g.ox - g.win.x0, PlaceY: g.oy - g.win.y0,
	}
	f.ScaleX, f.ScaleY = float64(g.rw)/float64(w), float64(g.rh)/float64(h)
	f.OffsetX, f.OffsetY = float64(f.PlaceX), float64(f.PlaceY)
	if p.set.Resize == Fit {
		gain := math.Min(float64(W)/float64(w), float64(H)/float64(h))
		f.ScaleX, f.ScaleY = gain, gain
	}
	return f
}

// Frames are where the batch's pictures go in its tensor, in order.
func (b *Batch) Frames() []Frame {
	out := make([]Frame, len(b.hs))
	for i, hd := range b.hs {
		out[i] = b.p.Frame(hd.w, hd.h, b.w)
	}
	return out
}

// Size is one picture's width and height as shown (after its EXIF
// orientation), read from its header alone, refusing what lim does not
// allow as Decode does: what its pixels will hold, known before they are
// decoded.
func Size(data []byte, lim Limits) (w, h int, err error) {
	hd, err := readHeader(0, data, lim)
	if err != nil {
		return 0, 0, err
	}
	return hd.w, hd.h, nil
}

// Shown decodes one picture as Batch.Keep keeps it, refusing what lim
// does not allow as Plan.Inspect does: the picture a drawing is made on
// when the preprocessing kept none, which then takes the same way to a
// canvas as a kept one (Picture.Planes, Own, RGBA).
func Shown(ctx context.Context, data []byte, lim Limits) (*Picture, error) {
	hd, err := readHeader(0, data, lim)
	if err != nil {
		return nil, err
	}
	img, err := decodeImage(ctx, 0, data, hd)
	if err != nil {
		return nil, err
	}
	return &Picture{img: img, hd: hd}, nil
}

// Picture is one picture as its decoder gave it, kept by Batch.Tensor
// when the batch was asked to (Batch.Keep): a drawing is made on it
// without decoding the picture a second time.
type Picture struct {
	img image.Image
	hd  header
}

// Width and Height are the picture's size as shown (after its EXIF
// orientation).
func (p *Picture) Width() int  { return p.hd.w }
func (p *Picture) Height() int { return p.hd.h }

// RGBA is the picture as it is shown (its EXIF orientation applied,
// alpha dropped), in a new *image.RGBA: the pixels Shown gives.
func (p *Picture) RGBA() (*image.RGBA, error) {
	if m, ok := p.img.(*image.RGBA); ok && p.hd.orientation == 1 && m.Opaque() {
		// An opaque RGB picture (as image/png decodes one) is already what
		// the drawing needs: copy it rather than pack it as RGB and widen
		// it again. A JPEG's YCbCr is converted straight into RGBA.
		b := m.Bounds()
		out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		for y := range b.Dy() {
			copy(out.Pix[y*out.Stride:y*out.Stride+4*b.Dx()], m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):])
		}
		return out, nil
	}
	if m, ok := p.img.(*image.YCbCr); ok && p.hd.orientation == 1 && p.hd.format != "webp" && m.Rect.Min == (image.Point{}) {
		return ycbcrToRGBA(m), nil
	}
	return p.packed()
}

// Own is the decoder's own RGBA picture, when it is the picture as shown
// (upright, at the origin), as image/png decodes an RGB picture: a
// drawing made on it, opaque (draw.Opaque), needs no copy. The caller
// then owns it; ok is false for any other picture.
func (p *Picture) Own() (m *image.RGBA, ok bool) {
	m, ok = p.img.(*image.RGBA)
	if !ok || p.hd.orientation != 1 || m.Rect.Min != (image.Point{}) {
		return nil, false
	}
	return m, true
}

// Opaque says whether the picture is known to be opaque without looking
// at its pixels: image/png decodes into *image.RGBA only a truecolour
// PNG without a transparent colour (with one, or with alpha, it gives
// *image.NRGBA), whose every alpha it sets to 255 (TestPNGRGBAIsOpaque
// holds it to that). A picture of another format, or another type, may
// still be opaque; then it is not known here.
func (p *Picture) Opaque() bool {
	_, rgba := p.img.(*image.RGBA)
	return rgba && p.hd.format == "png"
}

// Planes is the picture as its JPEG decoder gave it, when that is the
// picture as shown (upright, at the origin) and its chroma is no coarser
// than the 4:2:0 of a drawing's JPEG, with a function that converts it
// into RGBA (as it is then) exactly as RGBA converts it: a drawing is
// made on the planes themselves, which the caller then owns, and its
// JPEG encoded straight from them (draw.Over). ok is false for any other
// picture.
func (p *Picture) Planes() (m *image.YCbCr, toRGBA func() *image.RGBA, ok bool) {
	m, ok = p.img.(*image.YCbCr)
	if !ok || p.hd.orientation != 1 || p.hd.format == "webp" || m.Rect.Min != (image.Point{}) {
		return nil, nil, false
	}
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440:
		return m, func() *image.RGBA { return ycbcrToRGBA(m) }, true
	}
	return nil, nil, false
}

// packed is RGBA's general path: the picture packed as RGB by the
// preprocessing's own conversion, then widened.
func (p *Picture) packed() (*image.RGBA, error) {
	px := pack(p.img, p.hd, 3, nil)
	defer px.free()
	if px.w != p.hd.w || px.h != p.hd.h {
		return nil, &Error{Msg: fmt.Sprintf("%s decoded to %d×%d pixels, its header says %d×%d", p.hd.format, px.w, px.h, p.hd.w, p.hd.h)}
	}
	return Pixels{Pix: px.pix, W: px.w, H: px.h, C: 3}.RGBA(), nil
}

// RGBA is p, of 3 channels, as a new opaque *image.RGBA.
func (p Pixels) RGBA() *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, p.W, p.H))
	for y := range p.H {
		widenRow(out.Pix[y*out.Stride:y*out.Stride+4*p.W], p.Pix[y*p.W*3:(y+1)*p.W*3])
	}
	return out
}

// widenRow writes the RGB pixels of src into dst as opaque RGBA.
func widenRow(dst, src []byte) {
	for x := range len(src) / 3 {
		s, d := src[3*x:3*x+3:3*x+3], dst[4*x:4*x+4:4*x+4]
		d[0], d[1], d[2], d[3] = s[0], s[1], s[2], 255
	}
}
