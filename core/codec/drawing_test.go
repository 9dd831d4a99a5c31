package codec

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
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
