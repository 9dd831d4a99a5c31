package image

import (
	"bytes"
	"context"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// TestDecodeResizeIsThePlans decodes a picture once and resizes the
// pixels with each interpolation: the bytes must be the ones the
// tensor path (stretch to the same size, uint8 NHWC), which TestOpenCV
// holds to cv2.resize, gives for the same picture.
func TestDecodeResizeIsThePlans(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, photo(173, 91, 3)); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	px, err := Decode(context.Background(), data, 3, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Free()
	if px.W != 173 || px.H != 91 || px.C != 3 {
		t.Fatalf("decoded %d×%d×%d, want 173×91×3", px.W, px.H, px.C)
	}
	for _, interp := range []string{Nearest, Bilinear, Bicubic, Area} {
		for _, size := range [][2]int{{64, 32}, {173, 91}, {400, 150}, {90, 200}} {
			w, h := size[0], size[1]
			got, err := Resize(px, w, h, interp)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(Settings{Size: []int{h, w}, Resize: Stretch, Interpolation: interp, Color: "rgb", Layout: "nhwc"},
				tensor.Spec{Name: "x", DType: tensor.Uint8, Shape: []int64{1, int64(h), int64(w), 3}})
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.Tensor([][]byte{data}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.W != w || got.H != h || !slices.Equal(got.Pix, want.Data.([]uint8)) {
				t.Errorf("%s to %d×%d: Resize differs from the plan's tensor", interp, w, h)
			}
			got.Free()
		}
	}
}

// TestDecodeResizeRefuse: what is not a picture, a picture over the
// limits, and sizes or interpolations Resize cannot do are errors.
func TestDecodeResizeRefuse(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, photo(40, 30, 1)); err != nil {
		t.Fatal(err)
	}
	px, err := Decode(context.Background(), buf.Bytes(), 3, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Free()
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"not a picture", func() error { _, err := Decode(context.Background(), []byte("hello"), 3, Limits{}); return err }, "image 0: not an image"},
		{"too many pixels", func() error {
			_, err := Decode(context.Background(), buf.Bytes(), 3, Limits{MaxPixels: 100})
			return err
		}, "limits.max_image_pixels"},
		{"four channels", func() error { _, err := Decode(context.Background(), buf.Bytes(), 4, Limits{}); return err }, "want 1 or 3"},
		{"no width", func() error { _, err := Resize(px, 0, 10, Bilinear); return err }, "no pixels"},
		{"unknown interpolation", func() error { _, err := Resize(px, 10, 10, "lanczos"); return err }, `interpolation "lanczos"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
