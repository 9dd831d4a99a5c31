package image

import (
	"bytes"
	"encoding/binary"
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
		if n := jpegScans(data, maxJPEGScans); n > maxJPEGScans {
			return header{}, &Error{Index: i, Msg: fmt.Sprintf("jpeg of more than %d scans: refused", maxJPEGScans)}
		}
		hd.orientation = jpegOrientation(data)
		if hd.orientation >= 5 {
			hd.w, hd.h = hd.h, hd.w
		}
	}
	return hd, nil
}

// maxJPEGScans caps a JPEG's scans (SOS markers). Go's decoder walks every
// block of the image in every scan of a progressive JPEG, and a scan that
// skips them all with end-of-band runs is a dozen bytes: without a cap a
// 40 KB file of 1000 such scans over a megapixel took 3 s to decode (25 s
// for 340 KB), a cost of the input's size times its pixels. libjpeg's
// progressive script has 10 scans, a sequential JPEG one per component at
// most, so 100 refuses no real picture and bounds the decoding to about
// 100 passes over the pixels the header declared.
const maxJPEGScans = 100

// jpegScans counts the SOS markers of a JPEG, stopping past limit. It
// walks the marker segments and skips entropy-coded data to the next
// marker (0xFF not followed by 0x00, a restart marker or a fill byte), in
// one pass over data.
func jpegScans(data []byte, limit int) int {
	n := 0
	for i := 2; i+4 <= len(data) && n <= limit; {
		if data[i] != 0xff {
			return n
		}
		marker := data[i+1]
		switch {
		case marker == 0xff:
			i++
			continue
		case marker == 0xd9:
			return n
		case marker >= 0xd0 && marker <= 0xd7 || marker == 0x01:
			i += 2
			continue
		}
		i += 2 + int(binary.BigEndian.Uint16(data[i+2:]))
		if marker != 0xda {
			continue
		}
		n++
		i = nextMarker(data, i)
	}
	return n
}

// nextMarker is the index of the marker that ends the entropy-coded data
// starting at i (len(data) when none).
func nextMarker(data []byte, i int) int {
	for i < len(data) {
		j := bytes.IndexByte(data[i:], 0xff)
		if j < 0 {
			return len(data)
		}
		i += j
		if i+1 < len(data) {
			if m := data[i+1]; m != 0 && m != 0xff && (m < 0xd0 || m > 0xd7) {
				return i
			}
		}
		i++
	}
	return len(data)
}

func cleanErr(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "truncated"
	}
	return err.Error()
}

// decodeImage decodes data, whose header is hd.
func decodeImage(i int, data []byte, hd header) (image.Image, error) {
	img, err := codecs[hd.format].decode(bytes.NewReader(data))
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
	img, err := decodeImage(i, data, hd)
	if err != nil {
		return pixels{}, err
	}
	return pack(img, hd, channels, nil), nil
}
