package transport

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ReadBody reads the whole request body into buf (reusing its capacity),
// enforcing limit: a body over it is an *http.MaxBytesError, refused at once
// when Content-Length already says so. Every HTTP frontend reads its bodies
// with it.
func ReadBody(r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength > 0 && int64(cap(buf)) < r.ContentLength {
		buf = make([]byte, 0, r.ContentLength)
	}
	body := http.MaxBytesReader(nil, r.Body, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			return buf, err
		}
	}
}

// FormatBytes writes a size for messages: whole GiB, MiB or KiB when it is
// one, else bytes.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
