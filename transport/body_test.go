package transport_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadBody(t *testing.T) {
	const limit = 1024
	plain := `{"input": [[1, 2, 3, 4]]}`
	bomb := gzipped(t, strings.Repeat("0", 1<<20)) // 1 MiB of zeros in about 1 KiB
	tests := []struct {
		name     string
		body     []byte
		encoding []string
		want     string // the body read, when status is 0
		status   int    // of BodyError
		msg      string
	}{
		{name: "plain", body: []byte(plain), want: plain},
		{name: "identity", body: []byte(plain), encoding: []string{"identity"}, want: plain},
		{name: "gzip", body: gzipped(t, plain), encoding: []string{"gzip"}, want: plain},
		{name: "x-gzip, upper case", body: gzipped(t, plain), encoding: []string{" X-GZIP "}, want: plain},
		{name: "gzip at the limit", body: gzipped(t, strings.Repeat("1", limit)), encoding: []string{"gzip"}, want: strings.Repeat("1", limit)},
		{name: "gzip one byte over the limit", body: gzipped(t, strings.Repeat("1", limit+1)), encoding: []string{"gzip"},
			status: 413, msg: "Request body too large: the limit is 1 KiB"},
		{name: "compression bomb", body: bomb, encoding: []string{"gzip"}, status: 413, msg: "Request body too large: the limit is 1 KiB"},
		{name: "plain over the limit", body: []byte(strings.Repeat("1", limit+1)), status: 413, msg: "Request body too large: the limit is 1 KiB"},
		{name: "not gzip", body: []byte(plain), encoding: []string{"gzip"}, status: 400, msg: "Could not read request body: gzip body: gzip: invalid header"},
		{name: "truncated gzip", body: gzipped(t, plain)[:20], encoding: []string{"gzip"}, status: 400, msg: "Could not read request body: gzip body: unexpected EOF"},
		{name: "empty gzip", body: nil, encoding: []string{"gzip"}, status: 400, msg: "Could not read request body: gzip body: EOF"},
		{name: "br", body: []byte(plain), encoding: []string{"br"}, status: 415,
			msg: "Unsupported Content-Encoding 'br': send the body uncompressed or as gzip"},
		{name: "a chain", body: []byte(plain), encoding: []string{"gzip", "gzip"}, status: 415,
			msg: "Unsupported Content-Encoding 'gzip, gzip': send the body uncompressed or as gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the second run reuses a pooled gzip reader.
			for range 2 {
				r := httptest.NewRequest(http.MethodPost, "/predict", bytes.NewReader(tt.body))
				for _, e := range tt.encoding {
					r.Header.Add("Content-Encoding", e)
				}
				got, err := transport.ReadBody(r, limit)
				if tt.status == 0 {
					if err != nil || string(got) != tt.want {
						t.Fatalf("ReadBody = %.50q, %v; want %.50q", got, err, tt.want)
					}
					continue
				}
				if err == nil {
					t.Fatalf("ReadBody succeeded (%d bytes), want an error", len(got))
				}
				status, msg := transport.BodyError(err, limit)
				if status != tt.status || msg != tt.msg {
					t.Fatalf("BodyError = %d %q, want %d %q", status, msg, tt.status, tt.msg)
				}
			}
		})
	}
}

// TestReadBodyBuffers checks the buffers ReadBody reads into: every body
// read whole, whether its length is declared, unknown (chunked) or known
// only once decompressed; room for an answer a quarter larger than a
// declared body; and the storage given back with PutBody reused by the
// next body of about the same size.
func TestReadBodyBuffers(t *testing.T) {
	const limit = 8 << 20
	large := strings.Repeat("0123456789", 30000) // 300 KB: several growths from 64 KiB
	tests := []struct {
		name     string
		body     []byte
		length   int64 // Content-Length; -1 unknown
		encoding string
		want     string
		minCap   int
	}{
		{name: "small, declared", body: []byte("{}"), length: 2, want: "{}", minCap: tensor.MinPooled},
		{name: "large, declared", body: []byte(large), length: int64(len(large)), want: large, minCap: len(large) * 5 / 4},
		{name: "large, chunked", body: []byte(large), length: -1, want: large, minCap: len(large)},
		{name: "large, gzip", body: gzipped(t, large), length: -1, encoding: "gzip", want: large, minCap: len(large)},
		{name: "empty", body: nil, length: 0, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first *byte
			for i := range 2 {
				r := httptest.NewRequest(http.MethodPost, "/predict", bytes.NewReader(tt.body))
				r.ContentLength = tt.length
				if tt.encoding != "" {
					r.Header.Set("Content-Encoding", tt.encoding)
				}
				got, err := transport.ReadBody(r, limit)
				if err != nil || string(got) != tt.want {
					t.Fatalf("ReadBody = %.50q (%d bytes), %v; want %.50q (%d bytes)", got, len(got), err, tt.want, len(tt.want))
				}
				if cap(got) < tt.minCap {
					t.Fatalf("capacity %d, want at least %d", cap(got), tt.minCap)
				}
				if tt.minCap == 0 {
					transport.PutBody(got)
					return
				}
				// The second body of the same size reads into the
				// storage the first gave back.
				p := unsafe.SliceData(got)
				if i == 1 && p != first {
					t.Fatal("the buffer given back was not reused")
				}
				first = p
				transport.PutBody(got)
			}
		})
	}
}

// TestReadBodyGrowsToTheLimit reads bodies of unknown length around the
// limit: the buffer grows by doubling but never past one byte over the
// limit (rounded up to its pool's size), and a body over the limit is
// refused.
func TestReadBodyGrowsToTheLimit(t *testing.T) {
	const limit = 300000
	read := func(n int) ([]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/predict", strings.NewReader(strings.Repeat("7", n)))
		r.ContentLength = -1
		return transport.ReadBody(r, limit)
	}
	got, err := read(limit)
	if err != nil || len(got) != limit {
		t.Fatalf("ReadBody of %d bytes: %d bytes, %v", limit, len(got), err)
	}
	// Doubling from 256 KiB would make 512 KiB; the limit stops it at the
	// size class of limit+1 bytes, at most a quarter more.
	if max := (limit + 1) * 5 / 4; cap(got) > max {
		t.Fatalf("capacity %d for a limit of %d, want at most %d", cap(got), limit, max)
	}
	transport.PutBody(got)
	got, err = read(limit + 1)
	if status, _ := transport.BodyError(err, limit); err == nil || status != http.StatusRequestEntityTooLarge {
		t.Fatalf("ReadBody of %d bytes: %d bytes, %v; want a 413", limit+1, len(got), err)
	}
	transport.PutBody(got)
}
