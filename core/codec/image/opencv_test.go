//go:build !race

// The tests in this file compare the pictures svc makes with OpenCV's,
// case by case, in one goroutine. The race detector finds races between
// goroutines: it would find none here, and makes them several times
// slower. make test runs them in a pass of their own without it
// (ci/norace.sh); go test without -race runs them with the rest.

package image

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

const python = "/usr/bin/python3"

// fixtures writes the test pictures into a new directory: Go encodes the
// PNG and baseline JPEG, OpenCV and Pillow the rest.
func fixtures(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s missing: make test installs Debian's python3 with OpenCV (ci/install-deps.sh): %v", python, err)
	}
	dir := t.TempDir()
	encode(t, filepath.Join(dir, "photo.png"), photo(640, 480, 1), false)
	encode(t, filepath.Join(dir, "big.png"), photo(1280, 720, 2), false)
	encode(t, filepath.Join(dir, "odd.png"), photo(333, 517, 3), false)
	encode(t, filepath.Join(dir, "photo.jpg"), photo(640, 480, 1), true)
	out, err := exec.Command(python, "testdata/opencv_ref.py", "make", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("OpenCV fixtures (python3-opencv, python3-pil, installed by ci/install-deps.sh): %v\n%s", err, out)
	}
	return dir
}

// refCase is one request to opencv_ref.py.
type refCase struct {
	Name   string    `json:"name"`
	File   string    `json:"file"`
	Out    string    `json:"out"`
	Resize string    `json:"resize"`
	Interp string    `json:"interp"`
	Color  string    `json:"color"`
	Layout string    `json:"layout"`
	H      int       `json:"H"`
	W      int       `json:"W"`
	Cap    int       `json:"cap"`
	Scale  float64   `json:"scale"`
	Mean   []float64 `json:"mean"`
	Std    []float64 `json:"std"`
	Pad    float64   `json:"pad"`
}

// refFor describes plan p's steps for file as a request for OpenCV.
func refFor(p *Plan, name, file string, W int) refCase {
	mean, std := p.mean[:p.channels], p.std[:p.channels]
	capW := p.width
	if capW == 0 {
		capW = p.set.MaxWidth
	}
	return refCase{Name: name, File: file, Resize: p.set.Resize, Interp: p.set.Interpolation, Color: p.set.Color,
		Layout: p.set.Layout, H: p.height, W: W, Cap: capW, Scale: p.scale, Mean: mean, Std: std, Pad: p.pad}
}

// runRef has OpenCV compute every case, returning their tensors.
func runRef(t *testing.T, dir string, cases []refCase) [][]float32 {
	t.Helper()
	for i := range cases {
		cases[i].Out = filepath.Join(dir, fmt.Sprintf("ref%d.f32", i))
	}
	req, _ := json.Marshal(cases)
	reqPath := filepath.Join(dir, "req.json")
	if err := os.WriteFile(reqPath, req, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "testdata/opencv_ref.py", "ref", reqPath).CombinedOutput(); err != nil {
		t.Fatalf("opencv_ref.py: %v\n%s", err, out)
	}
	res := make([][]float32, len(cases))
	for i, c := range cases {
		raw, err := os.ReadFile(c.Out)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = make([]float32, len(raw)/4)
		for j := range res[i] {
			res[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
	}
	return res
}

// levels is the largest and mean difference of got from want in 1/255ths
// of the normalised range (one step of an 8-bit pixel), and how many
// elements differ at all.
func levels(p *Plan, got, want []float32) (maxd, mean float64, differ int) {
	step := p.scale / math.Min(math.Abs(p.std[0]), math.Min(math.Abs(p.std[1]), math.Abs(p.std[2])))
	if p.channels == 1 {
		step = p.scale / math.Abs(p.std[0])
	}
	sum := 0.0
	for i := range got {
		d := math.Abs(float64(got[i])-float64(want[i])) / step
		if d > 1e-3 {
			differ++
		}
		sum += d
		maxd = math.Max(maxd, d)
	}
	return maxd, sum / float64(len(got)), differ
}

type exactCase struct {
	name     string
	file     string
	settings Settings
	shape    []int64
	bound    float64 // largest difference allowed, in pixel levels
}

var modes = []struct {
	resize string
	h, w   int64
}{{Stretch, 224, 224}, {Fit, 320, 320}, {Cover, 224, 200}, {Height, 48, -1}}

var interps = []string{Nearest, Bilinear, Bicubic, Area}

func exactCases() []exactCase {
	var cs []exactCase
	sources := []struct {
		file  string
		bound float64
	}{
		{"big.png", 1}, {"odd.png", 1}, {"line-short.png", 1}, {"line-long.png", 1},
		{"photo.jpg", jpegBound}, {"baseline.jpg", jpegBound}, {"progressive.jpg", jpegBound},
	}
	for _, src := range sources {
		for _, m := range modes {
			for k, in := range interps {
				s := Settings{Resize: m.resize, Interpolation: in, Scale: ptr(1.0 / 255),
					Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Pad: ptr(114)}
				shape := []int64{-1, 3, m.h, m.w}
				switch k {
				case 1:
					s.Color = "bgr"
				case 2:
					s.Color, s.Mean, s.Std = "grey", []float64{0.5}, []float64{0.5}
					shape = []int64{-1, 1, m.h, m.w}
				case 3:
					s.Layout = "nhwc"
					shape = []int64{-1, m.h, m.w, 3}
				}
				if m.resize == Height {
					s.Size, s.MaxWidth, s.WidthMultiple = []int{48, 0}, 400, 8
					s.Pad = ptr(127.5)
				}
				cs = append(cs, exactCase{fmt.Sprintf("%s/%s/%s", src.file, m.resize, in), src.file, s, shape, src.bound})
			}
		}
	}
	return cs
}

// jpegBound is the largest difference measured between svc's JPEG decoding
// and libjpeg-turbo's (OpenCV's) after resizing, in pixel levels: Go's
// integer IDCT rounds differently from libjpeg's jidctint in some pixels;
// the chroma upsampling and colour conversion are libjpeg's.
const jpegBound = 3

// TestOpenCV compares svc's tensors with OpenCV's for every resize mode
// and interpolation, on photographs and text lines, PNG and JPEG.
func TestOpenCV(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenCV through python3")
	}
	dir := fixtures(t)
	cs := exactCases()
	refs := make([]refCase, len(cs))
	gots := make([]*tensor.Tensor, len(cs))
	plans := make([]*Plan, len(cs))
	for i, c := range cs {
		p, err := NewPlan(c.settings, tensor.Spec{Name: "x", DType: tensor.Float32, Shape: c.shape})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Tensor([][]byte{data}, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plans[i], gots[i] = p, got
		W := int(got.Shape[3])
		if p.nhwc {
			W = int(got.Shape[2])
		}
		refs[i] = refFor(p, c.name, filepath.Join(dir, c.file), W)
	}
	want := runRef(t, dir, refs)
	for i, c := range cs {
		got := gots[i].Data.([]float32)
		if len(got) != len(want[i]) {
			t.Errorf("%s: %d elements, OpenCV %d", c.name, len(got), len(want[i]))
			continue
		}
		maxd, mean, differ := levels(plans[i], got, want[i])
		t.Logf("%-40s max %.3f mean %.5f levels, %d of %d differ", c.name, maxd, mean, differ, len(got))
		if maxd > c.bound+1e-3 {
			t.Errorf("%s: differs from OpenCV by up to %.3f pixel levels (allowed %g)", c.name, maxd, c.bound)
		}
	}
}

// TestFormats decodes every accepted format and variant and compares with
// OpenCV's decoding (stretch to 160×120, bilinear, RGB).
func TestFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenCV through python3")
	}
	dir := fixtures(t)
	files := []struct {
		file  string
		bound float64
	}{
		{"photo.png", 0}, {"deep.png", 0}, {"palette.png", 0}, {"alpha.png", 0}, {"grey.png", 0},
		{"photo.gif", 0}, {"photo.bmp", 0}, {"lossless.webp", 0},
		{"photo.jpg", jpegBound}, {"baseline.jpg", jpegBound}, {"progressive.jpg", jpegBound},
		{"grey.jpg", jpegBound}, {"cmyk.jpg", jpegBound}, {"lossy.webp", webpBound},
	}
	var refs []refCase
	var gots [][]float32
	var plan *Plan
	for _, f := range files {
		p, err := NewPlan(Settings{Interpolation: Bilinear, Scale: ptr(1.0 / 255)}, tensor.Spec{DType: tensor.Float32, Shape: []int64{-1, 3, 120, 160}})
		if err != nil {
			t.Fatal(err)
		}
		plan = p
		data, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Tensor([][]byte{data}, 0)
		if err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		gots = append(gots, got.Data.([]float32))
		ref := f.file
		if ref == "photo.gif" {
			ref = "palette.png" // OpenCV 4.6 reads no GIF: the same pixels as PNG
		}
		refs = append(refs, refFor(p, f.file, filepath.Join(dir, ref), 160))
	}
	want := runRef(t, dir, refs)
	for i, f := range files {
		maxd, mean, differ := levels(plan, gots[i], want[i])
		t.Logf("%-16s max %.3f mean %.5f levels, %d differ", f.file, maxd, mean, differ)
		if maxd > f.bound+1e-3 {
			t.Errorf("%s: differs from OpenCV by up to %.3f levels (allowed %g)", f.file, maxd, f.bound)
		}
	}
}

// webpBound: Go's VP8 decoder with libwebp's colour conversion, but
// libjpeg's rounding of the chroma upsampling (libwebp's rounds each
// diagonal separately).
const webpBound = 2
