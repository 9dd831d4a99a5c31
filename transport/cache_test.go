package transport_test

import (
	"net/http"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

func TestNoCache(t *testing.T) {
	tests := []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"max-age=0"}, false},
		{[]string{"no-cache"}, true},
		{[]string{"No-Cache"}, true},
		{[]string{"max-age=0, no-store"}, true},
		{[]string{"private", " no-cache "}, true},
		{[]string{"no-cache-please"}, false},
	}
	for _, tt := range tests {
		if got := transport.NoCache(tt.values); got != tt.want {
			t.Errorf("NoCache(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

func TestSetCacheHeader(t *testing.T) {
	tests := []struct {
		status core.CacheStatus
		want   string
	}{
		{core.CacheUnused, ""},
		{core.CacheMiss, "miss"},
		{core.CacheHit, "hit"},
		{core.CacheBypass, "miss"},
	}
	for _, tt := range tests {
		h := http.Header{}
		transport.SetCacheHeader(h, tt.status)
		if got, ok := h[transport.CacheHeader]; (tt.want == "") != !ok || h.Get(transport.CacheHeader) != tt.want {
			t.Errorf("status %d: X-Cache %q, want %q", tt.status, got, tt.want)
		}
	}
}
