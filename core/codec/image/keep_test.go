package image

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// TestKeep keeps the decoded pictures of a batch for a drawing: the
// tensor is the one made without keeping, each kept picture converts to
// the pixels Shown decodes (orientation applied), and WorkBytes counts
// the pictures kept beside the one being preprocessed.
func TestKeep(t *testing.T) {
	t.Parallel()
	j := jpegBytes(t, photo(37, 23, 4), 95)
	var pb bytes.Buffer
	if err := png.Encode(&pb, photo(19, 41, 4)); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(Settings{Preset: "yolo"}, tensor.Spec{Name: "images", DType: tensor.Float32, Shape: []int64{-1, 3, 640, 640}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		images [][]byte
	}{
		{"one JPEG", [][]byte{j}},
		{"a JPEG turned by EXIF", [][]byte{withOrientation(j, 6, false)}},
		{"a PNG", [][]byte{pb.Bytes()}},
		{"three pictures", [][]byte{withOrientation(j, 3, true), pb.Bytes(), j}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, err := plan.Inspect(tt.images, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Tensor(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer want.Recycle()
			b, err := plan.Inspect(tt.images, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			b.Keep()
			var held, most int64
			for i, hd := range b.hs {
				most = max(most, held+plain.work(i))
				held += hd.decoded
			}
			if b.WorkBytes != most || (len(tt.images) == 1 && b.WorkBytes != plain.WorkBytes) {
				t.Errorf("WorkBytes kept %d, want %d (not kept %d)", b.WorkBytes, most, plain.WorkBytes)
			}
			if b.Kept(0) != nil {
				t.Fatal("a picture kept before Tensor decoded it")
			}
			got, err := b.Tensor(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer got.Recycle()
			if !slices.Equal(got.Data.([]float32), want.Data.([]float32)) {
				t.Fatal("keeping the pictures changed the tensor")
			}
			for i, data := range tt.images {
				p, err := Shown(context.Background(), data, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				shown, err := p.RGBA()
				if err != nil {
					t.Fatal(err)
				}
				k := b.Kept(i)
				if k == nil {
					t.Fatalf("picture %d not kept", i)
				}
				rgba, err := k.RGBA()
				if err != nil {
					t.Fatal(err)
				}
				if rgba.Bounds() != shown.Bounds() || k.Width() != shown.Bounds().Dx() || k.Height() != shown.Bounds().Dy() || !bytes.Equal(rgba.Pix, shown.Pix) {
					t.Fatalf("picture %d kept: %v (%d×%d), decoded again: %v; pixels differ", i, rgba.Bounds(), k.Width(), k.Height(), shown.Bounds())
				}
			}
		})
	}
}

// TestPictureRGBA: a kept picture converts to the same pixels whichever
// path it takes (an opaque RGBA picture is copied, a JPEG's YCbCr
// converted straight into RGBA, others packed by the preprocessing's
// conversion), and a translucent, turned or WebP one takes the packed
// path.
func TestPictureRGBA(t *testing.T) {
	t.Parallel()
	rgba := func(m image.Image) *image.RGBA {
		out := image.NewRGBA(m.Bounds())
		stddraw.Draw(out, out.Bounds(), m, m.Bounds().Min, stddraw.Src)
		return out
	}
	opaque := rgba(photo(29, 17, 5))
	half := photo(13, 11, 6)
	for i := 3; i < len(half.Pix); i += 8 {
		half.Pix[i] = 128
	}
	translucent := rgba(half)
	sub := rgba(photo(40, 30, 7)).SubImage(image.Rect(5, 7, 31, 22)).(*image.RGBA)
	tests := []struct {
		name string
		img  image.Image
		hd   header
	}{
		{"opaque", opaque, header{w: 29, h: 17, orientation: 1, format: "png"}},
		{"a sub-image", sub, header{w: 26, h: 15, orientation: 1, format: "png"}},
		{"translucent", translucent, header{w: 13, h: 11, orientation: 1, format: "png"}},
		{"turned by EXIF", opaque, header{w: 17, h: 29, orientation: 6, format: "png"}},
	}
	for _, c := range []struct {
		name   string
		w, h   int
		ratio  image.YCbCrSubsampleRatio
		format string
		orient int
	}{
		{"JPEG 4:2:0", 37, 23, image.YCbCrSubsampleRatio420, "jpeg", 1},
		{"JPEG 4:2:2", 30, 17, image.YCbCrSubsampleRatio422, "jpeg", 1},
		{"JPEG 4:4:4", 9, 5, image.YCbCrSubsampleRatio444, "jpeg", 1},
		{"JPEG turned by EXIF", 37, 23, image.YCbCrSubsampleRatio420, "jpeg", 8},
		{"WebP", 21, 13, image.YCbCrSubsampleRatio420, "webp", 1},
	} {
		m := image.NewYCbCr(image.Rect(0, 0, c.w, c.h), c.ratio)
		for i := range m.Y {
			m.Y[i] = uint8(i * 7)
		}
		for i := range m.Cb {
			m.Cb[i], m.Cr[i] = uint8(i*13), uint8(255-i*5)
		}
		hd := header{w: c.w, h: c.h, orientation: c.orient, format: c.format}
		if c.orient >= 5 {
			hd.w, hd.h = c.h, c.w
		}
		tests = append(tests, struct {
			name string
			img  image.Image
			hd   header
		}{c.name, m, hd})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Picture{img: tt.img, hd: tt.hd}
			got, err := p.RGBA()
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.packed()
			if err != nil {
				t.Fatal(err)
			}
			if got.Bounds() != want.Bounds() || !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("RGBA %v, packed %v: pixels differ", got.Bounds(), want.Bounds())
			}
		})
	}
}

// TestPicturePlanes: a JPEG's kept picture is given as its planes, for
// every chroma subsampling no coarser than 4:2:0, with a conversion that
// gives exactly RGBA's pixels of the planes as they are when it runs; a
// turned, WebP, displaced or 4:1:1 one is not. Own gives an upright RGBA
// picture at the origin itself, and nothing else.
func TestPicturePlanes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440,
	} {
		for _, size := range []image.Point{{37, 23}, {1, 1}, {16, 48}} {
			m := image.NewYCbCr(image.Rect(0, 0, size.X, size.Y), ratio)
			p := &Picture{img: m, hd: header{w: size.X, h: size.Y, orientation: 1, format: "jpeg"}}
			planes, toRGBA, ok := p.Planes()
			if !ok || planes != m {
				t.Fatalf("%v %v: no planes", ratio, size)
			}
			for _, plane := range [][]uint8{m.Y, m.Cb, m.Cr} {
				for i := range plane {
					plane[i] = uint8(rng.IntN(256))
				}
			}
			want, err := p.RGBA()
			if err != nil {
				t.Fatal(err)
			}
			if got := toRGBA(); got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("%v %v: the planes converted differ from RGBA's", ratio, size)
			}
		}
	}
	m := image.NewYCbCr(image.Rect(0, 0, 8, 6), image.YCbCrSubsampleRatio420)
	for _, p := range []*Picture{
		{img: m, hd: header{w: 6, h: 8, orientation: 6, format: "jpeg"}},
		{img: m, hd: header{w: 8, h: 6, orientation: 1, format: "webp"}},
		{img: m.SubImage(image.Rect(2, 2, 8, 6)), hd: header{w: 6, h: 4, orientation: 1, format: "jpeg"}},
		{img: image.NewYCbCr(image.Rect(0, 0, 8, 6), image.YCbCrSubsampleRatio411), hd: header{w: 8, h: 6, orientation: 1, format: "jpeg"}},
	} {
		if _, _, ok := p.Planes(); ok {
			t.Errorf("%+v, %v: planes given", p.hd, p.img.Bounds())
		}
	}

	rgba := image.NewRGBA(image.Rect(0, 0, 5, 4))
	if got, ok := (&Picture{img: rgba, hd: header{w: 5, h: 4, orientation: 1, format: "png"}}).Own(); !ok || got != rgba {
		t.Errorf("Own of an upright RGBA picture: %p, %v; want the picture itself", got, ok)
	}
	for name, p := range map[string]*Picture{
		"turned":      {img: rgba, hd: header{w: 4, h: 5, orientation: 6, format: "png"}},
		"a sub-image": {img: rgba.SubImage(image.Rect(1, 1, 5, 4)), hd: header{w: 4, h: 3, orientation: 1, format: "png"}},
		"a JPEG":      {img: m, hd: header{w: 8, h: 6, orientation: 1, format: "jpeg"}},
	} {
		if _, ok := p.Own(); ok {
			t.Errorf("Own of %s: given", name)
		}
	}
}

// TestPNGRGBAIsOpaque holds image/png to what Picture.Opaque relies on:
// of PNGs of every colour type (grey, grey with alpha, truecolour, with
// alpha, paletted, 8 and 16 bits, with and without a tRNS chunk), any it
// decodes into *image.RGBA is opaque, and a truecolour one with a
// transparent colour does not decode into *image.RGBA. Opaque says so for
// a PNG's RGBA picture only.
func TestPNGRGBAIsOpaque(t *testing.T) {
	t.Parallel()
	r := image.Rect(0, 0, 7, 5)
	rgba, nrgba, gray, gray16, rgba64 := image.NewRGBA(r), image.NewNRGBA(r), image.NewGray(r), image.NewGray16(r), image.NewRGBA64(r)
	pal := image.NewPaletted(r, []color.Color{color.RGBA{1, 2, 3, 255}, color.NRGBA{9, 9, 9, 100}})
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i*37) | 3
		nrgba.Pix[i] = uint8(i * 11)
	}
	for i := 3; i < len(rgba.Pix); i += 4 {
		rgba.Pix[i] = 255
	}
	for i := range pal.Pix {
		pal.Pix[i] = uint8(i % 2)
	}
	encode := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	rgb := encode(rgba)
	files := map[string][]byte{
		"truecolour": rgb, "truecolour and alpha": encode(nrgba), "grey": encode(gray),
		"grey 16": encode(gray16), "truecolour 16": encode(rgba64), "paletted": encode(pal),
		// A tRNS chunk after IHDR: the colour of the first pixel is
		// transparent.
		"truecolour with tRNS": withChunk(rgb, "tRNS", []byte{0, rgba.Pix[0], 0, rgba.Pix[1], 0, rgba.Pix[2]}),
		"grey with tRNS":       withChunk(encode(gray), "tRNS", []byte{0, 0}),
	}
	sawRGBA := false
	for name, data := range files {
		m, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := &Picture{img: m, hd: header{w: 7, h: 5, orientation: 1, format: "png"}}
		got, isRGBA := m.(*image.RGBA)
		if isRGBA {
			sawRGBA = true
			if !got.Opaque() {
				t.Errorf("%s: decoded into *image.RGBA with a translucent pixel", name)
			}
		}
		if name == "truecolour with tRNS" && (isRGBA || m.At(0, 0).(color.NRGBA).A != 0) {
			t.Errorf("%s: decoded into %T, the transparent colour's alpha %v", name, m, m.At(0, 0))
		}
		if p.Opaque() != isRGBA {
			t.Errorf("%s (%T): Opaque %v", name, m, p.Opaque())
		}
	}
	if !sawRGBA {
		t.Error("no PNG decoded into *image.RGBA")
	}
	for _, format := range []string{"bmp", "tiff", "webp", "jpeg"} {
		if (&Picture{img: rgba, hd: header{w: 7, h: 5, orientation: 1, format: format}}).Opaque() {
			t.Errorf("an RGBA picture from %s: known opaque", format)
		}
	}
}

// withChunk is the PNG data with a chunk inserted after IHDR.
func withChunk(data []byte, kind string, body []byte) []byte {
	const ihdrEnd = 8 + 8 + 13 + 4
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	chunk = append(chunk, kind...)
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return slices.Concat(data[:ihdrEnd], chunk, data[ihdrEnd:])
}
