package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// benchCase is one BenchmarkPreprocess case; build/bench-image.sh times
// the same file and steps with OpenCV.
type benchCase struct {
	name   string
	w, h   int
	jpeg   bool
	preset string
	shape  []int64
}

var benchCases = []benchCase{
	{"imagenet-1280x720-jpeg", 1280, 720, true, "imagenet", []int64{-1, 3, 224, 224}},
	{"yolo-4000x3000-jpeg", 4000, 3000, true, "yolo", []int64{-1, 3, 640, 640}},
	{"paddleocr-rec-320x48-png", 320, 48, false, "paddleocr-rec", []int64{-1, 3, 48, -1}},
}

// benchFile is the case's picture, written once into BENCH_IMAGE_DIR (kept
// for the OpenCV side) or a temporary directory.
func benchFile(b *testing.B, c benchCase) []byte {
	dir := os.Getenv("BENCH_IMAGE_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	ext := ".png"
	if c.jpeg {
		ext = ".jpg"
	}
	path := filepath.Join(dir, c.name+ext)
	if data, err := os.ReadFile(path); err == nil {
		return data
	}
	encode(b, path, photo(c.w, c.h, 11), c.jpeg)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkPreprocess(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			data := benchFile(b, c)
			p, err := NewPlan(Settings{Preset: c.preset}, tensor.Spec{DType: tensor.Float32, Shape: c.shape})
			if err != nil {
				b.Fatal(err)
			}
			batch := [][]byte{data}
			b.ReportAllocs()
			for b.Loop() {
				t, err := p.Tensor(batch, 0)
				if err != nil {
					b.Fatal(err)
				}
				t.Recycle()
			}
		})
	}
}
