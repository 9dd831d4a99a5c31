package image

import (
	"bytes"
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
// its EXIF orientation and the size once oriented.
type header struct {
	format      string
	orientation int
	w, h        int // as displayed (after orientation)
}

func notImage() string {
	return "not an image (accepted formats: " + strings.Join(Formats(), ", ") + ")"
}

// readHeader sniffs data and reads its size from the header only, refusing
// more than maxPixels (0: no limit) before anything is decoded.
func readHeader(i int, data []byte, maxPixels int64) (header, error) {
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
	if maxPixels > 0 && int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return header{}, &Error{Index: i, Msg: fmt.Sprintf("%s of %d×%d pixels: more than the %d pixels allowed", f, cfg.Width, cfg.Height, maxPixels)}
	}
	hd := header{format: f, orientation: 1, w: cfg.Width, h: cfg.Height}
	if f == "jpeg" {
		hd.orientation = jpegOrientation(data)
		if hd.orientation >= 5 {
			hd.w, hd.h = hd.h, hd.w
		}
	}
	return hd, nil
}

func cleanErr(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "truncated"
	}
	return err.Error()
}

// decode decodes data (whose header is hd) into a packed 8-bit buffer of
// channels 1 (grey) or 3 (RGB), oriented. The buffer comes from the pools:
// give it back with putBytes.
func decode(i int, data []byte, hd header, channels int) (pixels, error) {
	img, err := codecs[hd.format].decode(bytes.NewReader(data))
	if err != nil {
		return pixels{}, &Error{Index: i, Msg: fmt.Sprintf("%s undecodable: %s", hd.format, cleanErr(err))}
	}
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return pixels{}, &Error{Index: i, Msg: fmt.Sprintf("%s decoded to no pixels", hd.format)}
	}
	px := toPacked(img, channels, hd.format == "webp")
	if hd.orientation != 1 {
		o := orient(px, hd.orientation)
		px.free()
		px = o
	}
	return px, nil
}
