package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// TestDrawCaption draws a classify output as a caption on the picture the
// request sent: the picture at its size, a dark band at its top-left
// corner with light text on it, the rest untouched; a request with two
// pictures, or none, is refused before the model runs.
func TestDrawCaption(t *testing.T) {
	t.Parallel()
	set, err := New(config.Model{
		Inputs:  map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}},
		Outputs: map[string]config.ModelOutput{"p": {Classify: &config.Classify{}}},
	}, config.Limits{}).For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 301, 97))
	for i := range img.Pix {
		img.Pix[i] = 200
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	pic := b.Bytes()
	for _, tt := range []struct {
		name     string
		pictures [][]byte
		refusal  string
	}{
		{"one picture", [][]byte{pic}, ""},
		{"two pictures", [][]byte{pic, pic}, "the request sends 2: send one picture"},
		{"none", nil, "the request sends 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dec := set.NewDecoding()
			ctx := WithDecoding(context.Background(), dec)
			if tt.pictures != nil {
				ts, err := set.Tensors(ctx, []Pictures{{Input: set.Images()[0], Data: tt.pictures}})
				if err != nil {
					t.Fatal(err)
				}
				tensor.RecycleAll(ts)
			}
			err := dec.CheckDraw()
			if tt.refusal != "" {
				var in *core.InputError
				if err == nil || !strings.Contains(err.Error(), tt.refusal) || !errors.As(err, &in) {
					t.Fatalf("CheckDraw = %v, want an input error saying %q", err, tt.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := core.NewResult([]*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 2}, Data: []float32{0.1, 0.9}}})
			var out bytes.Buffer
			if err := dec.Draw(ctx, res, &out, DrawPNG); err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(&out)
			if err != nil || got.Bounds() != img.Bounds() {
				t.Fatalf("drawn: %v %v", got.Bounds(), err)
			}
			band := color.RGBAModel.Convert(got.At(1, 1)).(color.RGBA)
			far := color.RGBAModel.Convert(got.At(300, 96)).(color.RGBA)
			if band != (color.RGBA{24, 24, 24, 255}) || far != (color.RGBA{200, 200, 200, 255}) {
				t.Fatalf("band %v, far corner %v", band, far)
			}
			light := 0
			for y := range 20 {
				for x := range 120 {
					if c := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA); c.R > 200 {
						light++
					}
				}
			}
			if light < 20 {
				t.Errorf("%d light pixels of text in the caption", light)
			}
		})
	}
}

// TestDrawKept draws on the picture kept from the model's preprocessing
// (KeepPictures): the drawing is byte for byte the one drawn on the
// picture decoded again, as PNG and as JPEG, for a JPEG (drawn on its
// planes), a JPEG turned by its EXIF orientation, a PNG (drawn on
// itself) and a translucent PNG (drawn on a copy); the kept picture is let go once drawn
// on, and the budget holds it while the request lasts and nothing after.
func TestDrawKept(t *testing.T) {
	t.Parallel()
	set, err := New(config.Model{
		Inputs:  map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}},
		Outputs: map[string]config.ModelOutput{"p": {Classify: &config.Classify{}}},
	}, config.Limits{}).For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 157, 61))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*7 + i/628*13)
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var pb, jb bytes.Buffer
	if err := png.Encode(&pb, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	turned := exifOrientation(jb.Bytes(), 6)
	translucent := image.NewNRGBA(img.Rect)
	copy(translucent.Pix, img.Pix)
	for i := 3; i < len(translucent.Pix); i += 8 {
		translucent.Pix[i] = 100
	}
	var tb bytes.Buffer
	if err := png.Encode(&tb, translucent); err != nil {
		t.Fatal(err)
	}
	res := core.NewResult([]*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 2}, Data: []float32{0.1, 0.9}}})
	draw := func(t *testing.T, pic []byte, keep bool, mediaType string) []byte {
		t.Helper()
		mem := budget.New(64<<20, 0)
		ctx, end := mem.Begin(context.Background())
		dec := set.NewDecoding()
		if keep {
			dec.KeepPictures()
		}
		ctx = WithDecoding(ctx, dec)
		ts, err := set.Tensors(ctx, []Pictures{{Input: set.Images()[0], Data: [][]byte{pic}}})
		if err != nil {
			t.Fatal(err)
		}
		tensor.RecycleAll(ts)
		k := set.Images()[0].Index
		if kept := dec.kept[k]; (len(kept) == 1 && kept[0] != nil) != keep {
			t.Fatalf("asked to keep: %v, kept: %v", keep, kept)
		}
		var out bytes.Buffer
		if err := dec.Draw(ctx, res, &out, mediaType); err != nil {
			t.Fatal(err)
		}
		if len(dec.kept[k]) != 0 {
			t.Error("the kept picture is still held once drawn on")
		}
		if s := mem.Stats(); s.InUse == 0 {
			t.Error("the budget holds nothing while the request lasts")
		}
		end()
		if s := mem.Stats(); s.InUse != 0 {
			t.Errorf("the budget holds %d bytes after the request", s.InUse)
		}
		return out.Bytes()
	}
	for _, tt := range []struct {
		name string
		pic  []byte
	}{{"PNG", pb.Bytes()}, {"JPEG", jb.Bytes()}, {"JPEG turned by EXIF", turned}, {"translucent PNG", tb.Bytes()}} {
		for _, mt := range []string{DrawPNG, DrawJPEG} {
			t.Run(tt.name+" as "+mt, func(t *testing.T) {
				t.Parallel()
				again, kept := draw(t, tt.pic, false, mt), draw(t, tt.pic, true, mt)
				if !bytes.Equal(again, kept) {
					t.Fatalf("drawn on the kept picture: %d bytes, on the picture decoded again: %d bytes; they differ", len(kept), len(again))
				}
			})
		}
	}
}

// exifOrientation inserts an APP1 EXIF segment whose IFD0 holds the
// orientation o after a JPEG's SOI (little-endian TIFF).
func exifOrientation(j []byte, o uint16) []byte {
	le := binary.LittleEndian
	tiff := le.AppendUint32([]byte("II*\x00"), 8)
	tiff = le.AppendUint16(tiff, 1)
	tiff = le.AppendUint16(le.AppendUint16(tiff, 0x0112), 3)
	tiff = le.AppendUint16(le.AppendUint32(tiff, 1), o)
	tiff = append(tiff, 0, 0, 0, 0, 0, 0)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := binary.BigEndian.AppendUint16([]byte{0xff, 0xe1}, uint16(len(seg)+2))
	return slices.Concat(j[:2], app1, seg, j[2:])
}
