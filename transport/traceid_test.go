package transport

import (
	"context"
	"net/http/httptest"
	"testing"
)

// TestRequestTraceID: the access log's trace id comes from tracing's
// context value first, else from a well-formed traceparent header.
func TestRequestTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	valid := "00-" + id + "-00f067aa0ba902b7-01"
	ctxID := TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	cases := []struct {
		name, header string
		ctx          bool
		want         string
	}{
		{"none", "", false, ""},
		{"header", valid, false, id},
		{"context wins", valid, true, "0102030405060708090a0b0c0d0e0f10"},
		{"upper case", "00-" + "4BF92F3577B34DA6A3CE929D0E0E4736" + "-00f067aa0ba902b7-01", false, ""},
		{"zero id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, ""},
		{"short", "00-" + id[:30] + "-00f067aa0ba902b7-01", false, ""},
		{"other version", "01-" + id + "-00f067aa0ba902b7-01", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				r.Header.Set("traceparent", tc.header)
			}
			if tc.ctx {
				r = r.WithContext(WithTraceID(context.Background(), ctxID))
			}
			if got := requestTraceID(r); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
