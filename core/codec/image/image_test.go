package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

func pngBytes(t testing.TB, m image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, m image.Image, q int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a PNG signature and IHDR claiming w×h, with nothing after.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 2
	out := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	out = append(out, ihdr...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(ihdr))
}

func mustPlan(t testing.TB, s Settings, shape ...int64) *Plan {
	t.Helper()
	p, err := NewPlan(s, tensor.Spec{Name: "x", DType: tensor.Float32, Shape: shape})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInput(t *testing.T) {
	good := pngBytes(t, photo(40, 30, 9))
	jp := jpegBytes(t, photo(40, 30, 9), 80)
	scans, err := os.ReadFile("testdata/seed/scans-150.jpg")
	if err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, Settings{Preset: "imagenet"}, -1, 3, 224, 224)
	cases := []struct {
		name  string
		batch [][]byte
		max   int64
		index int
		want  string
	}{
		{"not an image", [][]byte{good, []byte("hello, world")}, 0, 1, "not an image (accepted formats: jpeg, png, webp, gif, bmp)"},
		{"empty", [][]byte{{}}, 0, 0, "empty"},
		{"truncated png", [][]byte{good[:len(good)/2]}, 0, 0, "png undecodable"},
		{"truncated jpeg", [][]byte{good, jp[:len(jp)/2]}, 0, 1, "jpeg"},
		{"png header only", [][]byte{good[:20]}, 0, 0, "png header unreadable"},
		{"bomb", [][]byte{pngHeader(100000, 100000)}, 50_000_000, 0, "100000×100000 pixels: more than the 50000000 pixels allowed"},
		{"zero size", [][]byte{pngHeader(0, 10)}, 0, 0, "png"},
		{"too big for the limit", [][]byte{good, good}, 1000, 0, "more than the 1000 pixels allowed"},
		{"gif text", [][]byte{[]byte("GIF89a nonsense")}, 0, 0, "gif"},
		{"progressive jpeg of 151 scans", [][]byte{good, scans}, 0, 1, "jpeg of more than 100 scans"},
		{"no batch", nil, 0, 0, "no images"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := p.Tensor(c.batch, c.max)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want *Error", got, err)
			}
			if e.Index != c.index || !strings.Contains(e.Msg, c.want) {
				t.Errorf("got index %d %q; want index %d containing %q", e.Index, e.Msg, c.index, c.want)
			}
		})
	}
}

// TestJPEGScans counts the scans of the seed JPEGs: the cap that refuses
// scans-150.jpg (a 64×48 progressive JPEG whose last scan repeats 141
// times) must leave real ones alone.
func TestJPEGScans(t *testing.T) {
	cases := []struct {
		file  string
		limit int
		want  int
	}{
		{"tiny.jpg", 100, 1},
		{"tiny-grey.jpg", 100, 1},
		{"tiny-progressive.jpg", 100, 10},
		{"scans-150.jpg", 1000, 151},
		{"scans-150.jpg", 100, 101},
		{"tiny.png", 100, 0},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join("testdata/seed", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := jpegWalk(data, c.limit).scans; got != c.want {
			t.Errorf("%s (limit %d): %d scans, want %d", c.file, c.limit, got, c.want)
		}
	}
}

// TestBombAllocates: a header claiming 10¹⁰ pixels is refused having
// allocated next to nothing.
func TestBombAllocates(t *testing.T) {
	p := mustPlan(t, Settings{Preset: "yolo"}, -1, 3, 640, 640)
	bomb := [][]byte{pngHeader(100000, 100000)}
	allocs := testing.AllocsPerRun(10, func() { _, _ = p.Tensor(bomb, 1<<24) })
	if allocs > 30 {
		t.Errorf("%v allocations refusing a bomb", allocs)
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		data string
		want string
	}{
		{"\xff\xd8\xff\xe0", "jpeg"}, {"\x89PNG\r\n\x1a\nxxxx", "png"}, {"RIFF\x00\x00\x00\x00WEBPVP8 ", "webp"},
		{"GIF87a", "gif"}, {"GIF89a", "gif"}, {"BM\x00\x00", "bmp"}, {"<html>", ""}, {"", ""},
	} {
		got, ok := Sniff([]byte(c.data))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Sniff(%q) = %q, %v; want %q", c.data, got, ok, c.want)
		}
	}
	if !slices.Equal(Formats(), []string{"jpeg", "png", "webp", "gif", "bmp"}) {
		t.Errorf("Formats() = %v", Formats())
	}
}

// withOrientation inserts an APP1 EXIF segment (TIFF, byte order bo, IFD0
// holding tag 0x0112 = o) after a JPEG's SOI.
func withOrientation(j []byte, o uint16, big bool) []byte {
	var bo binary.AppendByteOrder = binary.LittleEndian
	tiff := []byte("II*\x00")
	if big {
		bo, tiff = binary.BigEndian, []byte("MM\x00*")
	}
	tiff = bo.AppendUint32(tiff, 8)
	tiff = bo.AppendUint16(tiff, 2)
	tiff = append(bo.AppendUint16(bo.AppendUint16(tiff, 0x010f), 2), 0, 0, 0, 1, 'x', 0, 0, 0) // Make, an ASCII tag
	tiff = bo.AppendUint16(bo.AppendUint16(tiff, 0x0112), 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, o)
	tiff = append(tiff, 0, 0, 0, 0, 0, 0)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := binary.BigEndian.AppendUint16([]byte{0xff, 0xe1}, uint16(len(seg)+2))
	app1 = append(app1, seg...)
	return slices.Concat(j[:2], app1, j[2:])
}

// displayed is the reference for EXIF orientation o: the pixel of the
// stored w×h image that displayed (x, y) shows, by the EXIF definitions.
func displayed(o, x, y, w, h int) (int, int) {
	switch o {
	case 2:
		return w - 1 - x, y
	case 3:
		return w - 1 - x, h - 1 - y
	case 4:
		return x, h - 1 - y
	case 5:
		return y, x
	case 6:
		return y, h - 1 - x
	case 7:
		return w - 1 - y, h - 1 - x
	case 8:
		return w - 1 - y, x
	}
	return x, y
}

func TestOrientation(t *testing.T) {
	const w, h = 37, 23
	j := jpegBytes(t, photo(w, h, 4), 95)
	hd, err := readHeader(0, j, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := decode(0, j, hd, 3)
	if err != nil {
		t.Fatal(err)
	}
	for o := 1; o <= 8; o++ {
		for _, big := range []bool{false, true} {
			data := withOrientation(j, uint16(o), big)
			hd, err := readHeader(0, data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if hd.orientation != o {
				t.Fatalf("orientation %d read as %d", o, hd.orientation)
			}
			got, err := decode(0, data, hd, 3)
			if err != nil {
				t.Fatal(err)
			}
			wantW, wantH := w, h
			if o >= 5 {
				wantW, wantH = h, w
			}
			if got.w != wantW || got.h != wantH || hd.w != wantW || hd.h != wantH {
				t.Fatalf("orientation %d: %d×%d (header %d×%d), want %d×%d", o, got.w, got.h, hd.w, hd.h, wantW, wantH)
			}
			for y := range got.h {
				for x := range got.w {
					sx, sy := displayed(o, x, y, w, h)
					if !bytes.Equal(got.pix[(y*got.w+x)*3:][:3], plain.pix[(sy*w+sx)*3:][:3]) {
						t.Fatalf("orientation %d: pixel (%d,%d) is not stored (%d,%d)", o, x, y, sx, sy)
					}
				}
			}
		}
	}
}

func TestPlan(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     Settings
		shape []int64
		dtype tensor.DType
		want  string // Describe, or the error
	}{
		{"imagenet", Settings{Preset: "imagenet"}, []int64{-1, 3, 224, 224}, tensor.Float32,
			"image, resized to 224×224 (cover, bilinear), RGB, NCHW float32, ImageNet mean/std"},
		{"yolo half", Settings{Preset: "yolo"}, []int64{1, 3, 640, 640}, tensor.Float16,
			"image, resized to 640×640 (fit, bilinear), RGB, NCHW float16, pixel×0.00392157, pad 114"},
		{"cls", Settings{Preset: "paddleocr-cls"}, []int64{-1, 3, 48, 192}, tensor.Float32,
			"image, resized to height 48 keeping aspect (bilinear), padded right to width 192, BGR, NCHW float32"},
		{"rec", Settings{Preset: "paddleocr-rec"}, []int64{-1, 3, 48, -1}, tensor.Float32,
			"image, resized to height 48 keeping aspect (bilinear), width up to 3200 padded to the batch's widest rounded up to 8, at least 320"},
		{"nhwc uint8", Settings{Size: []int{100, 120}}, []int64{-1, -1, -1, 3}, tensor.Uint8,
			"image, resized to 100×120 (stretch, bilinear), RGB, NHWC uint8, pixels 0–255"},
		{"grey", Settings{}, []int64{-1, 1, 32, 32}, tensor.Float32, "GREY"},
		{"unknown preset", Settings{Preset: "resnet"}, []int64{-1, 3, 224, 224}, tensor.Float32, "preset: unknown preset \"resnet\""},
		{"ambiguous", Settings{}, []int64{-1, 3, 3, 3}, tensor.Float32, "layout:"},
		{"dynamic", Settings{}, []int64{-1, 3, -1, -1}, tensor.Float32, "size:"},
		{"int64", Settings{}, []int64{-1, 3, 8, 8}, tensor.Int64, "element type int64"},
		{"grey into 3", Settings{Color: "grey"}, []int64{-1, 3, 8, 8}, tensor.Float32, "color: grey needs 1 channels"},
		{"mean count", Settings{Mean: []float64{1, 2}}, []int64{-1, 3, 8, 8}, tensor.Float32, "mean: 2 values for 3 channels"},
		{"zero std", Settings{Std: []float64{0}}, []int64{-1, 3, 8, 8}, tensor.Float32, "std:"},
		{"size clash", Settings{Size: []int{10, 10}}, []int64{-1, 3, 8, 8}, tensor.Float32, "size: height 10"},
		{"interp", Settings{Interpolation: "lanczos"}, []int64{-1, 3, 8, 8}, tensor.Float32, "interpolation:"},
		{"uint8 scale", Settings{Scale: ptr(2)}, []int64{-1, 3, 8, 8}, tensor.Uint8, "scale:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.s, tensor.Spec{Name: "x", DType: c.dtype, Shape: c.shape})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = p.Describe()
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q; want it to contain %q", got, c.want)
			}
		})
	}
	if !slices.Equal(Presets(), []string{"imagenet", "paddleocr-cls", "paddleocr-rec", "yolo"}) {
		t.Errorf("Presets() = %v", Presets())
	}
}

// TestRecBatch: a batch of text lines is as wide as its widest line,
// rounded up to 8 and at least 320, every line padded with 0.
func TestRecBatch(t *testing.T) {
	p := mustPlan(t, Settings{Preset: "paddleocr-rec"}, -1, 3, 48, -1)
	short, long := pngBytes(t, photo(100, 48, 1)), pngBytes(t, photo(1001, 48, 2))
	got, err := p.Tensor([][]byte{short, long}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shape, []int64{2, 3, 48, 1008}) {
		t.Fatalf("shape %v, want [2 3 48 1008]", got.Shape)
	}
	d := got.Data.([]float32)
	if v := d[47*1008+500]; v != 0 { // item 0, channel 0, last row, past its 100 pixels
		t.Errorf("padding %v, want 0", v)
	}
	if r := p.Resolved(); r.WidthMultiple != 8 || r.MaxWidth != 3200 || *r.Pad != 127.5 {
		t.Errorf("Resolved() = %+v", r)
	}
	one, err := p.Tensor([][]byte{short}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if one.Shape[3] != 320 {
		t.Errorf("one short line: width %d, want 320", one.Shape[3])
	}
}

// TestDTypes: float16 and uint8 tensors hold what the float32 one does.
func TestDTypes(t *testing.T) {
	img := [][]byte{pngBytes(t, photo(90, 70, 5))}
	f32, err := mustPlan(t, Settings{Preset: "yolo", Size: []int{64, 64}}, -1, 3, -1, -1).Tensor(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := NewPlan(Settings{Preset: "yolo", Size: []int{64, 64}}, tensor.Spec{DType: tensor.Float16, Shape: []int64{-1, 3, -1, -1}})
	f16, err := hp.Tensor(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	bp, _ := NewPlan(Settings{Preset: "yolo", Size: []int{64, 64}}, tensor.Spec{DType: tensor.Uint8, Shape: []int64{-1, 3, -1, -1}})
	u8, err := bp.Tensor(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f32.Data.([]float32) {
		if h := f16.Data.([]uint16)[i]; h != tensor.Float32ToFloat16(v) {
			t.Fatalf("element %d: float16 %#x, float32 %v", i, h, v)
		}
		if b := u8.Data.([]uint8)[i]; float32(b)/255 != v {
			t.Fatalf("element %d: uint8 %d, float32 %v", i, b, v)
		}
	}
}

// maxFuzzPixels keeps each input of FuzzTensor cheap: the cost of an
// allowed image grows with its pixels (a megapixel of flat PNG is 10 KB and
// takes 50 ms a plan), and at 1<<20 the fuzzer spent its time minimizing
// such inputs at 0 execs/s. What it looks for (panics, unbounded work per
// byte) shows as well on 65536 pixels.
const maxFuzzPixels = 1 << 16

func FuzzTensor(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/seed/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add(pngHeader(3, 3))
	plans := []*Plan{
		mustPlan(f, Settings{Preset: "imagenet"}, -1, 3, 224, 224),
		mustPlan(f, Settings{Preset: "paddleocr-rec"}, -1, 3, 48, -1),
		mustPlan(f, Settings{Interpolation: Area, Size: []int{7, 5}}, -1, 1, -1, -1),
		mustPlan(f, Settings{Interpolation: Bicubic, Resize: Fit, Size: []int{9, 4}}, -1, -1, -1, 3),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = jpegOrientation(data)
		for _, p := range plans {
			got, err := p.Tensor([][]byte{data}, maxFuzzPixels)
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if err == nil {
				got.Recycle()
			}
		}
	})
}
