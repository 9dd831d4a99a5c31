package hostile

import (
	"bytes"
	"compress/zlib"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"testing"

	"golang.org/x/image/bmp"
)

// TestPicturesAreWhatTheySay: each hostile picture is what the decoders
// take for a picture of its size, so that a server that does not bound it
// pays for it in full.
func TestPicturesAreWhatTheySay(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		decode func([]byte) (image.Image, error)
		w, h   int
		// broken: the decoder allocates the picture, then finds no
		// pixels.
		broken bool
	}{
		{"gif", GIF1x1(), func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) }, 1, 1, false},
		{"progressive jpeg", ProgressiveJPEG(301, 203, 7, false), func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }, 301, 203, false},
		{"progressive jpeg with a stray byte", ProgressiveJPEG(64, 48, 3, true), func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }, 64, 48, false},
		{"16-bit png", ZeroPNG16(123, 45), func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }, 123, 45, false},
		// Rows of 6001 bytes: the first block of zeros, its repeat,
		// copies of the repeat and a part block.
		{"16-bit png of many blocks", ZeroPNG16(1000, 191), func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }, 1000, 191, false},
		{"16-bit png of two blocks", ZeroPNG16(1000, 50), func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }, 1000, 50, false},
		{"truncated bmp", TruncatedBMP(100, 50), func(b []byte) (image.Image, error) { return bmp.Decode(bytes.NewReader(b)) }, 100, 50, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := tt.decode(tt.data)
			if tt.broken {
				if err == nil {
					t.Fatal("decoded a picture that has no pixels")
				}
				cfg, err := bmp.DecodeConfig(bytes.NewReader(tt.data))
				if err != nil || cfg.Width != tt.w || cfg.Height != tt.h {
					t.Fatalf("header %v, %v; want %d×%d", cfg, err, tt.w, tt.h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tt.w || b.Dy() != tt.h {
				t.Errorf("decoded %v, want %d×%d", b, tt.w, tt.h)
			}
		})
	}
	if _, ok := mustDecodePNG(t, ZeroPNG16(4, 4)).(*image.RGBA64); !ok {
		t.Error("a 16-bit PNG decodes into 8 bytes a pixel")
	}
}

func mustDecodePNG(t *testing.T, b []byte) image.Image {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestJPEGScansCount: every scan is in the file, and the stray byte is
// where a marker walk that stops at non-marker bytes gives up.
func TestJPEGScansCount(t *testing.T) {
	for _, stray := range []bool{false, true} {
		data := ProgressiveJPEG(640, 480, 25, stray)
		if n := bytes.Count(data, []byte{0xff, 0xda}); n != 25 {
			t.Errorf("stray %v: %d SOS markers, want 25", stray, n)
		}
		sos := bytes.Index(data, []byte{0xff, 0xda})
		if stray != (data[sos-1] == 0x00) {
			t.Errorf("stray %v: the byte before the first scan is %#x", stray, data[sos-1])
		}
	}
}

// TestZlibZeros: the stream is n zeros, its checksum right, whatever n is
// against the block of zeros it repeats.
func TestZlibZeros(t *testing.T) {
	for _, n := range []int64{0, 1, zeroRun - 1, zeroRun, zeroRun + 1, 2 * zeroRun, 2*zeroRun + 1, 3 * zeroRun, 7*zeroRun + 12345} {
		r, err := zlib.NewReader(bytes.NewReader(zlibZeros(n)))
		if err != nil {
			t.Fatalf("%d zeros: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%d zeros: %v", n, err)
		}
		if int64(len(got)) != n || bytes.Count(got, []byte{0}) != len(got) {
			t.Errorf("%d zeros: decoded %d bytes, not all zero", n, len(got))
		}
	}
}
