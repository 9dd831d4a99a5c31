package codec

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/svc-dev/svc/transport/image"
)

// errNotPicture is a string that is neither base64 nor a data: URL.
var errNotPicture = errors.New("not an image: send the encoded file as base64 or as a data: URL (data:image/png;base64,...)")

// Picture returns the encoded picture that a JSON string carries: a data:
// URL with base64 data, or plain base64 in the standard or URL-safe
// alphabet, padded or not, with or without line breaks.
func Picture(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			return nil, errors.New("a data: URL must carry base64 data (data:image/jpeg;base64,...)")
		}
		s = data
	}
	if strings.ContainsAny(s, "\r\n \t") {
		s = strings.NewReplacer("\r", "", "\n", "", " ", "", "\t", "").Replace(s)
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil || len(s) == 0 {
		return nil, errNotPicture
	}
	return b, nil
}

// PictureBytes returns the encoded picture that a BYTES element carries:
// the element itself when it starts as an image file does, else the
// base64 or data: URL text it holds; an element that is neither is
// returned as it is, for the decoder to refuse with the formats it takes.
func PictureBytes(b []byte) []byte {
	if _, ok := image.Sniff(b); ok {
		return b
	}
	if p, err := Picture(string(b)); err == nil {
		return p
	}
	return b
}
