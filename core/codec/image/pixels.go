package image

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
)

// Pixels is a decoded picture: W×H pixels of C interleaved 8-bit
// channels (1 grey, 3 RGB), rows of W*C bytes. Pipelines that run
// several models on one picture decode it once into Pixels and cut and
// resize it from there.
type Pixels struct {
	Pix     []uint8
	W, H, C int
}

// Decode decodes one picture into Pixels of channels 1 or 3, oriented by
// its EXIF tag and converted as OpenCV's IMREAD_COLOR sees it (then
// BGR2GRAY for 1), after its header has passed lim. The decoder stops
// once ctx ends. The storage comes from the tensor pools: give it back
// with Free once nothing views it.
func Decode(ctx context.Context, data []byte, channels int, lim Limits) (Pixels, error) {
	if channels != 1 && channels != 3 {
		return Pixels{}, fmt.Errorf("decode: %d channels, want 1 or 3", channels)
	}
	hd, err := readHeader(0, data, lim)
	if err != nil {
		return Pixels{}, err
	}
	img, err := decodeImage(ctx, 0, data, hd)
	if err != nil {
		return Pixels{}, err
	}
	px := pack(img, hd, channels, nil)
	return Pixels{Pix: px.pix, W: px.w, H: px.h, C: px.c}, nil
}

// Free gives the storage of Pixels made by Decode or Resize back to the
// tensor pools.
func (p Pixels) Free() { tensor.PutSlice(p.Pix) }

// Resize is cv2.resize of p to w×h for 8-bit pictures, to the bit, with
// interp one of Nearest, Bilinear, Bicubic and Area. The result's storage
// comes from the tensor pools (Free).
func Resize(p Pixels, w, h int, interp string) (Pixels, error) {
	if w <= 0 || h <= 0 || p.W <= 0 || p.H <= 0 || len(p.Pix) < p.W*p.H*p.C {
		return Pixels{}, fmt.Errorf("resize %d×%d to %d×%d: no pixels", p.W, p.H, w, h)
	}
	var k int
	switch interp {
	case Nearest:
		k = interNearest
	case Bilinear:
		k = interLinear
	case Bicubic:
		k = interCubic
	case Area:
		k = interArea
	default:
		return Pixels{}, fmt.Errorf("resize: interpolation %q, want nearest, bilinear, bicubic or area", interp)
	}
	r := newResizer(p.W, p.H, p.C, w, h, k, window{w: w, h: h})
	out := newPixels(w, h, p.C)
	r.run(pixels{w: p.W, h: p.H, c: p.C, pix: p.Pix}, out.pix)
	return Pixels{Pix: out.pix, W: w, H: h, C: p.C}, nil
}
