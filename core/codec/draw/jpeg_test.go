package draw_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/codec/draw"
)

// psnr is the peak signal-to-noise ratio of got against want over their
// red, green and blue, in dB; a decoded picture starts at the origin,
// want may not.
func psnr(t *testing.T, want *image.RGBA, got image.Image) float64 {
	t.Helper()
	if got.Bounds().Size() != want.Bounds().Size() {
		t.Fatalf("decoded bounds %v, drawn %v", got.Bounds(), want.Bounds())
	}
	var sum float64
	b, off := want.Bounds(), got.Bounds().Min.Sub(want.Bounds().Min)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			w := want.RGBAAt(x, y)
			r, g, bl, _ := got.At(x+off.X, y+off.Y).RGBA()
			for _, d := range []float64{float64(w.R) - float64(r>>8), float64(w.G) - float64(g>>8), float64(w.B) - float64(bl>>8)} {
				sum += d * d
			}
		}
	}
	mse := sum / float64(3*b.Dx()*b.Dy())
	if mse == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/mse)
}

// scene is a w×h picture of smooth gradients, noise and a few hard edges,
// with (seed) its own noise.
func scene(w, h int, seed uint64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(seed, 1))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(16))
			c := color.RGBA{uint8(x*230/max(w, 1)) + n, uint8(y*230/max(h, 1)) + n, uint8((x+y)*120/(w+h)) + n, 255}
			if (x/13+y/11)%5 == 0 {
				c = color.RGBA{250 - n, 20 + n, 240, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// TestEncodeJPEG: a drawing answered as JPEG is a baseline 4:2:0 JPEG of
// the drawing's size, which image/jpeg decodes as faithfully as its own
// encoding at the same quality (within 0.3 dB), for sizes that fill
// whole 16×16 blocks and sizes that do not, flat colours, noise and a
// drawing with labels.
func TestEncodeJPEG(t *testing.T) {
	t.Parallel()
	labelled := blank(t, 203, 77)
	labelled.Box(10, 10, 150, 60, draw.Color(3))
	labelled.Label(10, 10, "person 0.93", draw.Color(3))
	noise := scene(64, 48, 9)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range noise.Pix {
		if i%4 != 3 {
			noise.Pix[i] = uint8(rng.IntN(256))
		}
	}
	tests := []struct {
		name string
		img  *image.RGBA
	}{
		{"one pixel", scene(1, 1, 1)},
		{"smaller than a block", scene(9, 7, 2)},
		{"one block", scene(16, 16, 3)},
		{"a row and a column over", scene(17, 33, 4)},
		{"odd photograph", scene(333, 251, 5)},
		{"flat", blank(t, 40, 24).Image()},
		{"noise", noise},
		{"a drawing", labelled.Image()},
		{"a sub-image", scene(80, 60, 12).SubImage(image.Rect(7, 5, 70, 58)).(*image.RGBA)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := draw.New(tt.img)
			if err != nil {
				t.Fatal(err)
			}
			var ours, theirs bytes.Buffer
			if err := c.Encode(&ours, draw.JPEG); err != nil {
				t.Fatal(err)
			}
			if err := jpeg.Encode(&theirs, tt.img, &jpeg.Options{Quality: draw.JPEGQuality}); err != nil {
				t.Fatal(err)
			}
			got, err := jpeg.Decode(bytes.NewReader(ours.Bytes()))
			if err != nil {
				t.Fatalf("image/jpeg cannot decode the answer: %v", err)
			}
			if m, ok := got.(*image.YCbCr); !ok || m.SubsampleRatio != image.YCbCrSubsampleRatio420 {
				t.Fatalf("decoded %T, want 4:2:0 YCbCr", got)
			}
			ref, err := jpeg.Decode(bytes.NewReader(theirs.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			p, q := psnr(t, tt.img, got), psnr(t, tt.img, ref)
			if p < q-0.3 {
				t.Errorf("PSNR %.2f dB, image/jpeg's own encoding %.2f dB", p, q)
			}
			if ours.Len() > theirs.Len()*11/10+64 {
				t.Errorf("%d bytes, image/jpeg's %d", ours.Len(), theirs.Len())
			}
		})
	}
}

// TestEncodeJPEGOpenCV: libjpeg, through OpenCV, reads the answer without
// a warning, and as faithfully as image/jpeg does.
func TestEncodeJPEGOpenCV(t *testing.T) {
	t.Parallel()
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s missing: make test installs Debian's python3 with OpenCV (ci/install-deps.sh): %v", python, err)
	}
	img := scene(321, 203, 11)
	c, err := draw.New(img)
	if err != nil {
		t.Fatal(err)
	}
	c.Box(20, 20, 200, 150, draw.Color(1))
	c.Label(20, 20, "car 0.88", draw.Color(1))
	dir := t.TempDir()
	var j, p bytes.Buffer
	if err := c.Encode(&j, draw.JPEG); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"a.jpg": j.Bytes(), "a.png": p.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `import sys, cv2, numpy as np
a = cv2.imread(sys.argv[1] + "/a.jpg").astype(np.float64)
b = cv2.imread(sys.argv[1] + "/a.png").astype(np.float64)
assert a.shape == b.shape, (a.shape, b.shape)
print(10 * np.log10(255 * 255 / np.mean((a - b) ** 2)))
`
	cmd := exec.Command(python, "-c", script, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("OpenCV: %v\n%s", err, stderr.String())
	}
	cv, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jpeg.Decode(bytes.NewReader(j.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if g := psnr(t, c.Image(), got); cv < g-1 {
		t.Errorf("PSNR through OpenCV %.2f dB, through image/jpeg %.2f dB", cv, g)
	}
}

// failingWriter takes n bytes, then fails every write.
type failingWriter struct{ n int }

var errWrite = errors.New("connection reset")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errWrite
	}
	f.n -= len(p)
	return len(p), nil
}

// TestEncodeWriteFails: a writer that fails (a client gone) fails the
// encoding with its error, in either format, whether it fails at once or
// after part of the picture.
func TestEncodeWriteFails(t *testing.T) {
	t.Parallel()
	c, err := draw.New(scene(900, 700, 13)) // over 64 KiB in either format
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{draw.JPEG, draw.PNG} {
		for _, after := range []int{0, 100, 70 << 10} {
			if err := c.Encode(&failingWriter{n: after}, format); !errors.Is(err, errWrite) {
				t.Errorf("%s, failing after %d bytes: %v, want the writer's error", format, after, err)
			}
		}
	}
}
