package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/bmp"
	"golang.org/x/image/webp"
)

// Error is a refused image: Index is its place in the batch.
type Error struct {
	Index int
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("image %d: %s", e.Index, e.Msg) }

// Formats are the accepted encodings.
func Formats() []string { return []string{"jpeg", "png", "webp", "gif", "bmp"} }

// Sniff names the format of data by its magic bytes.
func Sniff(data []byte) (format string, ok bool) {
	switch {
	case len(data) >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff:
		return "jpeg", true
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png", true
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp", true
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "gif", true
	case len(data) >= 2 && data[0] == 'B' && data[1] == 'M':
		return "bmp", true
	}
	return "", false
}

type codec struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var codecs = map[string]codec{
	"jpeg": {jpeg.DecodeConfig, jpeg.Decode},
	"png":  {png.DecodeConfig, png.Decode},
	"webp": {webp.DecodeConfig, webp.Decode},
	"gif":  {gif.DecodeConfig, gif.Decode},
	"bmp":  {bmp.DecodeConfig, bmp.Decode},
}

// header is what an image is before decoding: its format, its stored size,
// its EXIF orientation and the size once oriented, and what decoding it
// costs.
type header struct {
	format      string
	orientation int
	w, h        int // as displayed (after orientation)
	// decoded is the memory the format's decoder allocates for it.
	decoded int64
}

// Limits bound what decoding one picture may cost, checked on its header
// before anything is decoded; 0 bounds nothing.
type Limits struct {
	// MaxPixels caps its width × height (limits.max_image_pixels).
	MaxPixels int64
	// MaxScanPixels caps a JPEG's scans × pixels
	// (limits.max_jpeg_scan_pixels): Go's decoder makes one pass over the
	// pixels per scan, and one more to finish a progressive JPEG.
	MaxScanPixels int64
}

func notImage() string {
	return "not an image (accepted formats: " + strings.Join(Formats(), ", ") + ")"
}

// readHeader sniffs data and reads its size from the header only, refusing
// what lim does not allow, or a file too short for the pixels its header
// declares, before anything is decoded.
func readHeader(i int, data []byte, lim Limits) (header, error) {
	if len(data) == 0 {
		return header{}, &Error{Index: i, Msg: "empty: " + notImage()}
	}
	f, ok := Sniff(data)
	if !ok {
		return header{}, &Error{Index: i, Msg: notImage()}
	}
	cfg, err := codecs[f].config(bytes.NewReader(data))
	if err != nil {
		return header{}, &Error{Index: i, Msg: fmt.Sprintf("%s header unreadable: %s", f, cleanErr(err))}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return header{}, &Error{Index: i, Msg: fmt.Sprintf("%s of %d×%d pixels: nothing to see", f, cfg.Width, cfg.Height)}
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if lim.MaxPixels > 0 && pixels > lim.MaxPixels {
		return header{}, &Error{Index: i, Msg: fmt.Sprintf("%s of %d×%d pixels: more than the %d pixels allowed (limits.max_image_pixels)", f, cfg.Width, cfg.Height, lim.MaxPixels)}
	}
	hd := header{format: f, orientation: 1, w: cfg.Width, h: cfg.Height}
	var jpeg jpegInfo
	if f == "jpeg" {
		if jpeg, err = jpegCost(data, cfg.Width, cfg.Height, lim.MaxScanPixels); err != nil {
			return header{}, &Error{Index: i, Msg: err.Error()}
		}
		hd.orientation = jpegOrientation(data)
		if hd.orientation >= 5 {
			hd.w, hd.h = hd.h, hd.w
		}
	}
	var whole bool
	if hd.decoded, whole = decodedBytes(f, data, cfg.Width, cfg.Height, jpeg); !whole {
		return header{}, &Error{Index: i, Msg: fmt.Sprintf("%s of %d×%d pixels truncated: the file is shorter than the pixels its header declares", f, cfg.Width, cfg.Height)}
	}
	return hd, nil
}

// maxJPEGScans caps a JPEG's scans (SOS markers), whatever its size: each
// scan costs the decoder a pass over its blocks and a header's work.
// libjpeg's progressive script has 10 scans, a sequential JPEG one per
// component at most, so 100 refuses no real picture.
const maxJPEGScans = 100

// jpegCost reads a w×h JPEG's markers as the decoder will, and refuses
// more than maxJPEGScans scans, or more than maxScanPixels (0: no bound)
// scans × pixels.
func jpegCost(data []byte, w, h int, maxScanPixels int64) (jpegInfo, error) {
	px := int64(w) * int64(h)
	limit := maxJPEGScans
	if maxScanPixels > 0 {
		limit = int(min(int64(limit), maxScanPixels/px))
	}
	in := jpegWalk(data, limit)
	if in.scans > maxJPEGScans {
		return in, fmt.Errorf("jpeg of more than %d scans: refused", maxJPEGScans)
	}
	passes := int64(in.scans)
	if in.progressive {
		passes++
	}
	if maxScanPixels > 0 && passes*px > maxScanPixels {
		what := fmt.Sprintf("%d scans", in.scans)
		if in.scans > limit {
			what = fmt.Sprintf("more than %d scans", limit)
		}
		return in, fmt.Errorf("jpeg of %d×%d pixels in %s: decoding it is a pass over its %d pixels per scan, more than the %d scans × pixels allowed (limits.max_jpeg_scan_pixels)", w, h, what, px, maxScanPixels)
	}
	return in, nil
}

func cleanErr(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "truncated"
	}
	return err.Error()
}

// decodeImage decodes data, whose header is hd; the decoder stops
// reading once ctx ends, and the error is then ctx's cause.
func decodeImage(ctx context.Context, i int, data []byte, hd header) (image.Image, error) {
	img, err := codecs[hd.format].decode(&ctxReader{ctx: ctx, r: bytes.NewReader(data)})
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, &Error{Index: i, Msg: fmt.Sprintf("%s undecodable: %s", hd.format, cleanErr(err))}
	}
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return nil, &Error{Index: i, Msg: fmt.Sprintf("%s decoded to no pixels", hd.format)}
	}
	return img, nil
}

// shown is the size of a decoded image as displayed (oriented).
func shown(img image.Image, hd header) (w, h int) {
	b := img.Bounds()
	if hd.orientation >= 5 {
		return b.Dy(), b.Dx()
	}
	return b.Dx(), b.Dy()
}

// pack converts a decoded image into a packed 8-bit buffer of channels 1
// (grey) or 3 (RGB), oriented. Given r (the resize planned on the shown
// size) and no reorientation, only the pixels r reads need be filled. The
// buffer comes from the pools: give it back with free.
func pack(img image.Image, hd header, channels int, r *resizer) pixels {
	var cols, rows []int32
	if r != nil && hd.orientation == 1 {
		cols, rows = r.reads()
	}
	px := toPacked(img, channels, hd.format == "webp", cols, rows)
	if hd.orientation != 1 {
		o := orient(px, hd.orientation)
		px.free()
		px = o
	}
	return px
}

// decode decodes data (whose header is hd) into a packed, oriented 8-bit
// buffer of channels 1 (grey) or 3 (RGB), every pixel converted.
func decode(i int, data []byte, hd header, channels int) (pixels, error) {
	img, err := decodeImage(context.Background(), i, data, hd)
	if err != nil {
		return pixels{}, err
	}
	return pack(img, hd, channels, nil), nil
}

// ctxReader reads r until ctx ends: a decoder reading through it stops at
// its next read once the request is over (decoders read in blocks of a
// few KiB, so a picture whose work grows with its bytes stops early; one
// whose work does not is bounded by its header, readHeader).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
