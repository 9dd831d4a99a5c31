package config

import (
	"fmt"
	"time"
)

// ModelCache configures a model's response cache (models.NAME.cache;
// core/cache): off unless present.
type ModelCache struct {
	// Size bounds the bytes the cache holds, keys and outputs: a size
	// such as 256MiB. Required, positive.
	Size string `yaml:"size"`
	// TTL is how long an answer is kept (a duration such as 10m; absent
	// or 0: until evicted or the model reloads).
	TTL string `yaml:"ttl"`
}

// Parsed is the cache's size in bytes and its time to live.
func (m ModelCache) Parsed() (size int64, ttl time.Duration, err error) {
	size, key, msg := m.check()
	if key != "" {
		return 0, 0, fmt.Errorf("cache.%s %s", key, msg)
	}
	if m.TTL != "" {
		ttl, _ = ParseDuration(m.TTL)
	}
	return size, ttl, nil
}

// check returns the size, or the first invalid key under cache and what
// is wrong with it.
func (m ModelCache) check() (int64, string, string) {
	if m.Size == "" {
		return 0, "size", "is required: the bytes the cache may hold, such as 256MiB"
	}
	size, err := ParseByteSize(m.Size)
	if err != nil {
		return 0, "size", err.Error()
	}
	if size <= 0 {
		return 0, "size", fmt.Sprintf("must be positive, got %q (remove cache to turn it off)", m.Size)
	}
	if m.TTL != "" {
		if _, err := ParseDuration(m.TTL); err != nil {
			return 0, "ttl", err.Error()
		}
	}
	return size, "", ""
}
