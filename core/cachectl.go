package core

import "context"

// CacheStatus is what the response cache (core/cache) did for one
// request.
type CacheStatus uint8

// The statuses. CacheUnused is the zero value: the model has no cache, or
// the request is not one it keeps (a sequence's step, the warm-up).
const (
	CacheUnused CacheStatus = iota
	// CacheMiss: the model ran for the request (its answer was kept for
	// the next ones).
	CacheMiss
	// CacheHit: the answer came from the cache, or from the run of an
	// identical request under way at the same time.
	CacheHit
	// CacheBypass: the request asked not to use the cache; the model ran.
	CacheBypass
)

// Header is the status as the X-Cache header (and the gRPC x-cache
// header) says it: hit, or miss for a run (a bypass too); "" when the
// cache was not used.
func (s CacheStatus) Header() string {
	switch s {
	case CacheHit:
		return "hit"
	case CacheMiss, CacheBypass:
		return "miss"
	}
	return ""
}

// CacheControl is one request's dealing with the response cache: a
// protocol puts it in the request's context for a run whose answer may be
// kept (WithCacheControl), saying whether the request bypasses the cache,
// and reads back what the cache did. A context without one is never
// cached: sequences, the warm-up.
type CacheControl struct {
	// Bypass runs the model whatever the cache holds, and keeps nothing.
	Bypass bool
	// Status is what the cache did, set during the run.
	Status CacheStatus
}

type cacheKey struct{}

// WithCacheControl returns ctx carrying c for the response cache.
func WithCacheControl(ctx context.Context, c *CacheControl) context.Context {
	return context.WithValue(ctx, cacheKey{}, c)
}

// CacheControlOf is the control ctx carries, or nil.
func CacheControlOf(ctx context.Context) *CacheControl {
	c, _ := ctx.Value(cacheKey{}).(*CacheControl)
	return c
}
