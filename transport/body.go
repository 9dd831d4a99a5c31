package transport

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// UnsupportedEncodingError is a request body in a Content-Encoding the
// server does not decode (a 415 for clients).
type UnsupportedEncodingError struct{ Encoding string }

func (e *UnsupportedEncodingError) Error() string {
	enc := e.Encoding
	if len(enc) > 64 {
		enc = enc[:64] + "..."
	}
	return fmt.Sprintf("Unsupported Content-Encoding '%s': send the body uncompressed or as gzip", enc)
}

// gzipReaders keeps gzip readers (about 40 KiB each) between requests.
var gzipReaders sync.Pool

// ReadBody reads the whole request body into a buffer from the tensor
// pools (tensor.MakeSlice), enforcing limit: a body over it is an
// *http.MaxBytesError, refused at once when Content-Length already says
// so. A body with Content-Encoding gzip is decompressed, and the limit
// applies to the decompressed bytes (so a compression bomb stops at the
// limit); identity is the same as none, and any other encoding is an
// *UnsupportedEncodingError. Every HTTP frontend reads its bodies with it;
// BodyError maps its errors to an answer.
//
// The buffer has room for a quarter more than a declared Content-Length:
// handlers write the answer over the body, and an answer about the size
// of the body then fits. A pooled buffer is not cleared when it is reused,
// and a new one is mostly fresh pages from the system, which take memory
// only where they are written. The caller gives the buffer back with
// PutBody, also when ReadBody fails.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	var buf []byte
	if r.ContentLength > limit {
		return buf, &http.MaxBytesError{Limit: limit}
	}
	var src io.Reader = r.Body
	switch enc := contentEncoding(r.Header); enc {
	case "", "identity":
		if r.ContentLength > 0 {
			buf = bodyBuffer(r.ContentLength + r.ContentLength/4 + 1)
		}
	case "gzip", "x-gzip":
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(r.Body)
		} else {
			err = zr.Reset(r.Body)
		}
		if err != nil {
			return buf, fmt.Errorf("gzip body: %w", err)
		}
		defer gzipReaders.Put(zr)
		src = zr
	default:
		return buf, &UnsupportedEncodingError{Encoding: enc}
	}
	body := http.MaxBytesReader(nil, io.NopCloser(src), limit)
	for {
		if len(buf) == cap(buf) {
			// Full (or none yet): twice the room, from the pools, and the
			// old buffer back to them. One byte past the limit is enough
			// to find a body over it.
			grown := bodyBuffer(min(max(2*int64(cap(buf)), tensor.MinPooled), limit+1))[:len(buf)]
			copy(grown, buf)
			PutBody(buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			var tooBig *http.MaxBytesError
			if src != r.Body && !errors.As(err, &tooBig) && !isTimeout(err) {
				err = fmt.Errorf("gzip body: %w", err)
			}
			return buf, err
		}
	}
}

// bodyBuffer is an empty buffer of at least n bytes, pooled when n is at
// least tensor.MinPooled (a body smaller than that gets a buffer of that
// size: one class for the small bodies, reused).
func bodyBuffer(n int64) []byte {
	return tensor.MakeSlice[byte](int(max(n, tensor.MinPooled)))[:0]
}

// PutBody gives a buffer of ReadBody back to the pools (or, when it grew
// beyond them as an answer was written over it, to the garbage collector).
// Neither it nor anything sharing its storage may be used afterwards.
func PutBody(b []byte) { tensor.PutSlice(b) }

// contentEncoding is the request's Content-Encoding, lower-cased; several
// values (a chain of encodings) are returned as written.
func contentEncoding(h http.Header) string {
	vs := h.Values("Content-Encoding")
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return strings.ToLower(strings.TrimSpace(vs[0]))
	}
	return strings.Join(vs, ", ")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// BodyError maps an error of ReadBody (or Inference.ReadBody) to the
// status and message of the answer: 413 for a body over limit, 408 for a
// client too slow to send it, 415 for an encoding the server does not
// decode; the memory budget's refusals as ErrorStatus answers them (413,
// 503: the caller sets Retry-After with SetRetryAfter); else 400.
func BodyError(err error, limit int64) (status int, msg string) {
	var (
		tooBig *http.MaxBytesError
		enc    *UnsupportedEncodingError
		large  *core.LimitError
		busy   *core.BusyError
	)
	switch {
	case errors.As(err, &large), errors.As(err, &busy), errors.Is(err, core.ErrCanceled):
		status, msg, _ = ErrorStatus(err)
		return status, msg
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "Request body too large: the limit is " + FormatBytes(limit)
	case isTimeout(err):
		return http.StatusRequestTimeout, "Request timeout: the body did not arrive in time"
	case errors.As(err, &enc):
		return http.StatusUnsupportedMediaType, enc.Error()
	}
	return http.StatusBadRequest, "Could not read request body: " + err.Error()
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

// TrimBOM drops a UTF-8 byte order mark from the start of a JSON text,
// which RFC 8259 lets a parser ignore (some Windows tools write one).
func TrimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}
