package transport

import (
	"net/http"
	"strings"

	"github.com/svc-dev/svc/core"
)

// CacheHeader says whether an answer came from the model's response cache
// (core/cache): hit, or miss when the model ran. Absent when the model has
// no cache or the request is not one it keeps (a sequence's step). gRPC
// answers carry it as the response header (metadata) x-cache.
const CacheHeader = "X-Cache"

// CacheMetadata is CacheHeader's name in gRPC metadata, both ways: the
// response's x-cache, and a request's cache-control.
const (
	CacheMetadata        = "x-cache"
	CacheControlMetadata = "cache-control"
)

// NoCache reports whether Cache-Control values ask to bypass the response
// cache: no-cache (or no-store) among their directives.
func NoCache(values []string) bool {
	for _, v := range values {
		for d := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache", "no-store":
				return true
			}
		}
	}
	return false
}

// SetCacheHeader says in h what the response cache did, when it was used.
func SetCacheHeader(h http.Header, s core.CacheStatus) {
	if v := s.Header(); v != "" {
		h.Set(CacheHeader, v)
	}
}
