package codec

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	stdimage "image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// pagesRunner describes a pipeline: one input of pictures it decodes
// itself, one output of JSON documents.
type pagesRunner struct{}

func (pagesRunner) Info() core.ModelInfo {
	return core.ModelInfo{
		Name:    "ocr",
		Inputs:  []core.InputSpec{{Name: "image", Type: "string", Shape: []int64{-1}, Required: true, Pictures: true}},
		Outputs: []core.OutputSpec{{Name: "pages", Type: "string", Shape: []int64{-1}, JSON: true}},
	}
}

func (pagesRunner) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "image", DType: tensor.String, Shape: []int64{-1}}}
}

func (pagesRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("not run")
}

// TestOwnPictures: a model whose runner decodes its pictures has its
// pictures input known and can be drawn only with a Painter; a drawing
// is of one picture sent, made on the picture the runner kept (given back
// once drawn) or on the picture decoded again when it kept none, at its
// size, with what the Painter draws; the memory it holds is reserved for
// as long as the request lasts.
func TestOwnPictures(t *testing.T) {
	t.Parallel()
	plain, err := New(config.Model{}, config.Limits{}).For(pagesRunner{})
	if err != nil || plain.PicturesInput() != 0 || plain.Drawable() || len(plain.Images()) != 0 {
		t.Fatalf("without a Painter: pictures input %d, drawable %v (%v)", plain.PicturesInput(), plain.Drawable(), err)
	}
	red := color.RGBA{255, 0, 0, 255}
	paint := func(c *draw.Canvas, res core.Result) error {
		if res.Len() != 1 {
			return errors.New("no answer")
		}
		c.Outline([][2]float64{{10, 10}, {50, 10}, {50, 30}, {10, 30}}, red)
		return nil
	}
	set, err := New(config.Model{}, config.Limits{}).PaintWith(paint).For(pagesRunner{})
	if err != nil || set.PicturesInput() != 0 || !set.Drawable() {
		t.Fatalf("with a Painter: pictures input %d, drawable %v (%v)", set.PicturesInput(), set.Drawable(), err)
	}
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, 90, 60))
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
	res := core.NewResult([]*tensor.Tensor{{DType: tensor.String, Shape: []int64{1}, Data: []string{"{}"}}})
	for _, tt := range []struct {
		name    string
		sent    []string
		keep    bool
		refusal string
	}{
		{"kept by the runner", []string{string(pic)}, true, ""},
		{"decoded again", []string{base64.StdEncoding.EncodeToString(pic)}, false, ""},
		{"two pictures", []string{string(pic), string(pic)}, false, "the request sends 2: send one picture"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := budget.New(64<<20, 0)
			ctx, end := mem.Begin(context.Background())
			defer end()
			dec := set.NewDecoding()
			dec.KeepPictures()
			ctx = WithDecoding(ctx, dec)
			dec.SentPictures(tt.sent)
			if err := dec.CheckDraw(); tt.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("CheckDraw: %v, want %q", err, tt.refusal)
				}
				return
			} else if err != nil {
				t.Fatal(err)
			}
			if tt.keep {
				px, err := image.Decode(ctx, pic, 3, image.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if kept, err := KeepDecoded(ctx, px); !kept || err != nil {
					t.Fatalf("KeepDecoded: %v %v", kept, err)
				}
			}
			var out bytes.Buffer
			if err := dec.Draw(ctx, res, &out, DrawPNG); err != nil {
				t.Fatal(err)
			}
			if dec.ownKept != nil {
				t.Error("the kept picture is still held once drawn on")
			}
			got, err := png.Decode(&out)
			if err != nil || got.Bounds() != img.Bounds() {
				t.Fatalf("a drawing of %v (%v), want %v", got.Bounds(), err, img.Bounds())
			}
			if c := color.RGBAModel.Convert(got.At(10, 20)); c != red {
				t.Errorf("pixel (10, 20) is %v, want the Painter's %v", c, red)
			}
			if c := color.RGBAModel.Convert(got.At(30, 20)); c != (color.RGBA{200, 200, 200, 255}) {
				t.Errorf("pixel (30, 20) is %v, want the picture's", c)
			}
			if s := mem.Stats(); s.InUse < int64(90*60*12) {
				t.Errorf("the budget holds %d bytes while the request lasts, want the drawing's", s.InUse)
			}
		})
	}
	// A request that asks for no drawing keeps nothing.
	if kept, err := KeepDecoded(WithDecoding(context.Background(), set.NewDecoding()), image.Pixels{C: 3}); kept || err != nil {
		t.Errorf("KeepDecoded without a drawing asked: %v %v", kept, err)
	}
}
