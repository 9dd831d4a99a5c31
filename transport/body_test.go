package transport_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
				got, err := transport.ReadBody(r, nil, limit)
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
