package image

import (
	"context"
	"math"

	"github.com/svc-dev/svc/core/tensor"
)

// layout is where one image goes: resized (virtually) to rw×rh, of which
// window win is kept and placed at (ox, oy) of the item's plane.
type layout struct {
	rw, rh int
	win    window
	ox, oy int
}

func roundHalfUp(f float64) int { return int(math.Floor(f + 0.5)) }

// place works out the geometry of one w×h image for a W×H item (W is the
// batch width in height mode).
func (p *Plan) place(w, h, W, H int) layout {
	var l layout
	switch p.set.Resize {
	case Cover:
		s := math.Max(float64(W)/float64(w), float64(H)/float64(h))
		l.rw, l.rh = max(W, roundHalfUp(float64(w)*s)), max(H, roundHalfUp(float64(h)*s))
		l.win = window{x0: (l.rw - W) / 2, y0: (l.rh - H) / 2, w: W, h: H}
		return l
	case Fit:
		// Rounded as Python's round() (half to even), as Ultralytics'
		// LetterBox rounds its new_unpad, so that the padding is its too.
		s := math.Min(float64(W)/float64(w), float64(H)/float64(h))
		l.rw = min(max(int(math.RoundToEven(float64(w)*s)), 1), W)
		l.rh = min(max(int(math.RoundToEven(float64(h)*s)), 1), H)
		l.ox, l.oy = (W-l.rw)/2, (H-l.rh)/2
	case Height:
		l.rw, l.rh = min(p.lineWidth(w, h), W), H
	default:
		l.rw, l.rh = W, H
	}
	l.win = window{w: l.rw, h: l.rh}
	return l
}

// lineWidth is height mode's width of a w×h line: PaddleOCR's
// ceil(H * (w/h)) in float64 (so the same, to the pixel), at least 1, at
// most the model's width or max_width.
func (p *Plan) lineWidth(w, h int) int {
	rw := int(math.Ceil(float64(p.height) * (float64(w) / float64(h))))
	limit := p.width
	if limit == 0 {
		limit = p.set.MaxWidth
	}
	return min(max(rw, 1), limit)
}

// batchWidth is the tensor's width: the model's, or in height mode with a
// dynamic width the widest line's, at least minWidth, rounded up to
// width_multiple.
func (p *Plan) batchWidth(hs []header) int {
	if p.width > 0 {
		return p.width
	}
	w := p.minWidth
	for _, hd := range hs {
		w = max(w, p.lineWidth(hd.w, hd.h))
	}
	if m := p.set.WidthMultiple; m > 1 {
		w = (w + m - 1) / m * m
	}
	return w
}

// Batch is a batch of encoded pictures whose headers were read: what
// making its tensor costs is known before anything is decoded.
type Batch struct {
	p      *Plan
	images [][]byte
	hs     []header
	w      int // the tensor's width
	// Pixels is the pictures' width × height, summed.
	Pixels int64
	// TensorBytes is the size of the tensor; WorkBytes what decoding and
	// preprocessing the largest picture holds beside it (the decoder's
	// picture, its packed and oriented pixels, the resized window): the
	// pictures are decoded one at a time.
	TensorBytes, WorkBytes int64
	// kept are the decoded pictures, by index, once Keep asked for them
	// and Tensor decoded them.
	keep bool
	kept []*Picture
}

// Keep asks Tensor to keep each decoded picture (Kept) for a drawing, so
// that it is not decoded a second time, and adds what they hold to
// WorkBytes: the pictures decoded so far stay beside the one being
// preprocessed. Call it before reserving WorkBytes.
func (b *Batch) Keep() {
	if b.keep {
		return
	}
	b.keep = true
	var held int64
	b.WorkBytes = 0
	for i, hd := range b.hs {
		b.WorkBytes = max(b.WorkBytes, held+b.work(i))
		held += hd.decoded
	}
}

// Kept is picture i as its decoder gave it, or nil when the batch did not
// keep it (Keep) or Tensor has not decoded it.
func (b *Batch) Kept(i int) *Picture {
	if i < 0 || i >= len(b.kept) {
		return nil
	}
	return b.kept[i]
}

// work is what decoding and preprocessing picture i holds beside the
// tensor: the decoder's picture, its packed and oriented pixels, the
// resized window.
func (b *Batch) work(i int) int64 {
	hd, C := b.hs[i], int64(b.p.channels)
	px := int64(hd.w) * int64(hd.h) * C
	if hd.orientation != 1 {
		px *= 2
	}
	g := b.p.place(hd.w, hd.h, b.w, b.p.height)
	return hd.decoded + px + int64(g.win.w)*int64(g.win.h)*C
}

// Inspect reads the header of each picture of a batch, refusing what lim
// does not allow, and works out what decoding the batch costs. Its errors
// are *Error, naming the batch index.
func (p *Plan) Inspect(images [][]byte, lim Limits) (*Batch, error) {
	if len(images) == 0 {
		return nil, &Error{Index: 0, Msg: "no images in the batch"}
	}
	b := &Batch{p: p, images: images, hs: make([]header, len(images))}
	for i, data := range images {
		hd, err := readHeader(i, data, lim)
		if err != nil {
			return nil, err
		}
		b.hs[i] = hd
		b.Pixels += int64(hd.w) * int64(hd.h)
	}
	b.w = p.batchWidth(b.hs)
	H, W, C := int64(p.height), int64(b.w), int64(p.channels)
	for i := range b.hs {
		b.WorkBytes = max(b.WorkBytes, b.work(i))
	}
	b.TensorBytes = int64(len(images)) * C * H * W * int64(p.dtype.Size())
	return b, nil
}

// Tensor decodes a batch of encoded images into one tensor [N, ...] in the
// model's layout and element type. maxPixels (width×height, 0 for no limit)
// is checked on every header before anything is decoded. Its errors are
// *Error, naming the batch index.
func (p *Plan) Tensor(images [][]byte, maxPixels int64) (*tensor.Tensor, error) {
	b, err := p.Inspect(images, Limits{MaxPixels: maxPixels})
	if err != nil {
		return nil, err
	}
	return b.Tensor(context.Background())
}

// Tensor decodes the batch into one tensor [N, ...] in the model's layout
// and element type. ctx is looked at between pictures and by the
// decoders' reads: once it ends, the work stops and the error is ctx's
// cause. A picture that does not decode is an *Error naming its index.
func (b *Batch) Tensor(ctx context.Context) (*tensor.Tensor, error) {
	p := b.p
	H, W, C := p.height, b.w, p.channels
	n := len(b.images)
	t := &tensor.Tensor{DType: p.dtype, Shape: []int64{int64(n), int64(C), int64(H), int64(W)}}
	if p.nhwc {
		t.Shape = []int64{int64(n), int64(H), int64(W), int64(C)}
	}
	size := n * C * H * W
	var err error
	switch p.dtype {
	case tensor.Float16:
		d := tensor.MakeSlice[uint16](size)[:size]
		t.Data, err = d, fill(ctx, b, d, halfLUT(p))
	case tensor.Uint8:
		d := tensor.MakeSlice[uint8](size)[:size]
		t.Data, err = d, fill(ctx, b, d, byteLUT(p))
	default:
		d := tensor.MakeSlice[float32](size)[:size]
		t.Data, err = d, fill(ctx, b, d, floatLUT(p))
	}
	if err != nil {
		t.Recycle()
		return nil, err
	}
	return t, nil
}

// lut maps a byte of each output channel to its element, and holds the
// padding's element.
type lut[T any] struct {
	v   [3][256]T
	pad [3]T
}

func (p *Plan) norm(ch int, v float64) float64 {
	return (v*p.scale - p.mean[ch]) / p.std[ch]
}

func floatLUT(p *Plan) *lut[float32] {
	l := new(lut[float32])
	for ch := range p.channels {
		for v := range 256 {
			l.v[ch][v] = float32(p.norm(ch, float64(v)))
		}
		l.pad[ch] = float32(p.norm(ch, p.pad))
	}
	return l
}

func halfLUT(p *Plan) *lut[uint16] {
	l := new(lut[uint16])
	for ch := range p.channels {
		for v := range 256 {
			l.v[ch][v] = tensor.Float32ToFloat16(float32(p.norm(ch, float64(v))))
		}
		l.pad[ch] = tensor.Float32ToFloat16(float32(p.norm(ch, p.pad)))
	}
	return l
}

func byteLUT(p *Plan) *lut[uint8] {
	l := new(lut[uint8])
	for ch := range p.channels {
		for v := range 256 {
			l.v[ch][v] = uint8(v)
		}
		l.pad[ch] = uint8(min(max(math.Round(p.pad), 0), 255))
	}
	return l
}

// fill decodes, resizes and writes each image into its place of out.
func fill[T any](ctx context.Context, b *Batch, out []T, l *lut[T]) error {
	p, W := b.p, b.w
	H, C := p.height, p.channels
	item := H * W * C
	for i, data := range b.images {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		hd := b.hs[i]
		img, err := decodeImage(ctx, i, data, hd)
		if err != nil {
			return err
		}
		if b.keep {
			if b.kept == nil {
				b.kept = make([]*Picture, len(b.images))
			}
			b.kept[i] = &Picture{img: img, hd: hd}
		}
		w, h := shown(img, hd)
		g := p.place(w, h, W, H)
		r := newResizer(w, h, C, g.rw, g.rh, p.interp, g.win)
		px := pack(img, hd, C, r)
		tmp := newPixels(g.win.w, g.win.h, C)
		r.run(px, tmp.pix)
		px.free()
		writeItem(p, out[i*item:(i+1)*item], tmp, g, W, l)
		tmp.free()
	}
	return nil
}

// writeItem normalises the resized pixels into one item of the tensor and
// pads the rest. Channel ch of the tensor is packed channel ch (RGB) or 2-ch
// (BGR).
func writeItem[T any](p *Plan, out []T, px pixels, g layout, W int, l *lut[T]) {
	H, C := p.height, p.channels
	padded := px.w != W || px.h != H
	for ch := range C {
		src := ch
		if p.bgr {
			src = 2 - ch
		}
		tab, pad := &l.v[ch], l.pad[ch]
		if p.nhwc && padded {
			for y := range H {
				row := out[y*W*C : (y+1)*W*C]
				for x := range W {
					row[x*C+ch] = pad
				}
			}
		} else if padded {
			plane := out[ch*H*W : (ch+1)*H*W]
			for i := range plane {
				plane[i] = pad
			}
		}
		for y := range px.h {
			s := px.pix[y*px.w*C : (y+1)*px.w*C]
			if p.nhwc {
				row := out[((g.oy+y)*W+g.ox)*C : ((g.oy+y)*W+g.ox+px.w)*C]
				for x := range px.w {
					row[x*C+ch] = tab[s[x*C+src]]
				}
				continue
			}
			row := out[ch*H*W+(g.oy+y)*W+g.ox : ch*H*W+(g.oy+y)*W+g.ox+px.w]
			if C == 1 {
				for x, v := range s {
					row[x] = tab[v]
				}
				continue
			}
			for x := range row {
				row[x] = tab[s[3*x+src]]
			}
		}
	}
}
