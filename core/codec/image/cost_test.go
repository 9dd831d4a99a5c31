package image

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/svc-dev/svc/ci/hostile"
)

// TestJPEGWalkSeesEveryScan: the walk counts the scans Go's decoder
// decodes, a stray byte before them or not (a walk that stopped at the
// first byte that is not a marker counted none, and let any number
// through).
func TestJPEGWalkSeesEveryScan(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		limit int
		want  int
	}{
		{"plain", hostile.ProgressiveJPEG(64, 64, 12, false), 100, 12},
		{"stray byte", hostile.ProgressiveJPEG(64, 64, 12, true), 100, 12},
		{"stops past the limit", hostile.ProgressiveJPEG(64, 64, 500, true), 100, 101},
		{"fill bytes and junk", junkBetween(hostile.ProgressiveJPEG(64, 64, 3, false)), 100, 3},
	}
	for _, tt := range tests {
		in := jpegWalk(tt.data, tt.limit)
		if in.scans != tt.want || !in.progressive || len(in.comps) != 1 {
			t.Errorf("%s: %+v, want %d scans of a progressive one-component JPEG", tt.name, in, tt.want)
		}
	}
}

// junkBetween puts bytes that are no markers, a stuffed 0xFF 0x00 and
// fill bytes before every marker after the first two segments.
func junkBetween(j []byte) []byte {
	var out []byte
	for i := 0; i < len(j); i++ {
		if i > 100 && j[i] == 0xff && i+1 < len(j) && j[i+1] != 0 && j[i+1] != 0xff {
			out = append(out, 0x12, 0x34, 0xff, 0x00, 0xff, 0xff)
		}
		out = append(out, j[i])
	}
	return out
}

// TestHeaderCosts: what the header says a picture costs, and the
// pictures refused for it before anything is decoded.
func TestHeaderCosts(t *testing.T) {
	lim := Limits{MaxPixels: 40_000_000, MaxScanPixels: 400_000_000}
	tests := []struct {
		name string
		data []byte
		// refused is a part of the refusal ("" if taken); atLeast the
		// decoder's memory taken pictures must be counted at.
		refused string
		atLeast int64
	}{
		{"progressive jpeg under the cap", hostile.ProgressiveJPEG(2000, 2000, 9, true), "", 5 * 2000 * 2000},
		{"scans × pixels over the cap", hostile.ProgressiveJPEG(6000, 6000, 99, true), "jpeg of 6000×6000 pixels in more than 11 scans", 0},
		{"scans × pixels over, hidden after a stray byte", hostile.ProgressiveJPEG(3000, 3000, 60, true), "(limits.max_jpeg_scan_pixels)", 0},
		{"too many scans", hostile.ProgressiveJPEG(8, 8, 150, false), "jpeg of more than 100 scans", 0},
		{"16-bit png", hostile.ZeroPNG16(1000, 1000), "", 8 * 1000 * 1000},
		{"truncated bmp", hostile.TruncatedBMP(6000, 6000), "bmp of 6000×6000 pixels truncated", 0},
		{"too many pixels", hostile.ProgressiveJPEG(8000, 6000, 1, false), "more than the 40000000 pixels allowed (limits.max_image_pixels)", 0},
	}
	for _, tt := range tests {
		hd, err := readHeader(3, tt.data, lim)
		if tt.refused != "" {
			var ie *Error
			if !errors.As(err, &ie) || ie.Index != 3 || !strings.Contains(ie.Msg, tt.refused) {
				t.Errorf("%s: %v, want a refusal of item 3 holding %q", tt.name, err, tt.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if hd.decoded < tt.atLeast {
			t.Errorf("%s: counted at %d bytes, want at least %d", tt.name, hd.decoded, tt.atLeast)
		}
	}
}

// TestRefusedFromTheHeader: a truncated BMP that claims 36 megapixels is
// refused having allocated next to nothing (x/image/bmp allocated the
// whole picture, 144 MB, before finding no rows).
func TestRefusedFromTheHeader(t *testing.T) {
	p := mustPlan(t, Settings{Preset: "yolo"}, -1, 3, 640, 640)
	bomb := [][]byte{hostile.TruncatedBMP(6000, 6000)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := p.Tensor(bomb, 40_000_000)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a truncated BMP was decoded")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("%d bytes allocated refusing a truncated BMP", n)
	}
}

// TestInspectCounts: a batch's pixels, its tensor and the largest
// picture's work, before decoding.
func TestInspectCounts(t *testing.T) {
	p := mustPlan(t, Settings{Preset: "yolo"}, -1, 3, 640, 640)
	gif := hostile.GIF1x1()
	b, err := p.Inspect([][]byte{gif, gif, hostile.ZeroPNG16(400, 300)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Pixels != 2+400*300 {
		t.Errorf("pixels %d, want %d", b.Pixels, 2+400*300)
	}
	if want := int64(3 * 3 * 640 * 640 * 4); b.TensorBytes != want {
		t.Errorf("tensor %d bytes, want %d", b.TensorBytes, want)
	}
	// The PNG: 8 bytes a pixel decoded, 3 packed, and its resized window.
	if min := int64(400*300*11 + 640*480*3); b.WorkBytes < min {
		t.Errorf("work %d bytes, want at least %d", b.WorkBytes, min)
	}
}

// TestDecodeStopsWithTheRequest: a batch whose request ended is not
// decoded; the error is the context's cause.
func TestDecodeStopsWithTheRequest(t *testing.T) {
	p := mustPlan(t, Settings{Preset: "yolo", Size: []int{64, 64}}, -1, 3, 64, 64)
	b, err := p.Inspect([][]byte{hostile.ZeroPNG16(64, 64)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	gone := errors.New("client gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(gone)
	if _, err := b.Tensor(ctx); !errors.Is(err, gone) {
		t.Errorf("decoding for a request that ended: %v, want its cause", err)
	}
	if tt, err := b.Tensor(context.Background()); err != nil || tt.Shape[0] != 1 {
		t.Errorf("decoding: %v, %v", tt, err)
	}
}
