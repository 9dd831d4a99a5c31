package pipeline

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestPictureBytes: a BYTES element is the picture itself, its base64
// (standard or URL-safe, padded or not, with line breaks) or a data: URL;
// anything else passes as it is, for the decoder to refuse.
func TestPictureBytes(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), 0xfb, 0xff, 0xfe, 0x00)
	std := base64.StdEncoding.EncodeToString(png)
	for _, tc := range []struct {
		name string
		in   []byte
		want []byte
	}{
		{"the picture", png, png},
		{"base64", []byte(std), png},
		{"base64 unpadded", []byte(base64.RawStdEncoding.EncodeToString(png)), png},
		{"base64 url-safe", []byte(base64.URLEncoding.EncodeToString(png)), png},
		{"base64 with line breaks", []byte(std[:4] + "\n" + std[4:]), png},
		{"data URL", []byte("data:image/png;base64," + std), png},
		{"not a picture", []byte("hello, world"), []byte("hello, world")},
		{"empty", []byte{}, []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PictureBytes(tc.in); !bytes.Equal(got, tc.want) {
				t.Fatalf("PictureBytes(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
