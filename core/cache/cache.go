// Package cache is the response cache (svc.yml's models.NAME.cache): the
// outputs of the model's runs, kept by the generation that ran them and
// the decoded inputs, so that a request that means what an earlier one
// meant is answered without a run, whatever protocol or wire form either
// came in. It sits in front of the scheduler (Scheduler), below every
// protocol: each encodes its answer from the cached outputs as it would
// from a run's, so the output selection, parameters.raw and the outputs'
// decoding are applied after the cache and need no place in its key.
//
// The cache is bounded in bytes (keys and values, LRU eviction), entries
// may expire (ttl), concurrent identical requests share one run (single
// flight), and a hot reload empties it. Only the runs whose context
// carries a core.CacheControl are cached: the protocols' one-shot
// inferences, never a sequence's step or the warm-up.
package cache

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Options configure a cache.
type Options struct {
	// Size bounds the bytes the entries hold, keys and outputs
	// (models.NAME.cache.size); it must be positive.
	Size int64
	// TTL is how long an entry answers after its run (0: until evicted
	// or the model reloads).
	TTL time.Duration
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time
}

// Stats are the cache's figures.
type Stats struct {
	// Hits counts answers from the cache or from an identical request's
	// run; Misses the runs made for cacheable requests; Evictions the
	// entries removed to make room.
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	Evictions uint64 `json:"evictions"`
	// Bytes is what the entries hold now; Entries how many there are;
	// Size the bound.
	Bytes   int64 `json:"bytes"`
	Entries int64 `json:"entries"`
	Size    int64 `json:"size"`
}

// Add adds o's figures to s (the workers' sum).
func (s *Stats) Add(o Stats) {
	s.Hits += o.Hits
	s.Misses += o.Misses
	s.Evictions += o.Evictions
	s.Bytes += o.Bytes
	s.Entries += o.Entries
	s.Size += o.Size
}

// Key identifies a request to one generation: a SHA-256 digest.
type Key [32]byte

// Cache is a response cache. It is safe for concurrent use.
type Cache struct {
	opts Options

	mu      sync.Mutex
	lru     list.List // of *entry, most recently used first
	entries map[Key]*list.Element
	flights map[Key]*flight
	bytes   int64
	// current is the epoch of the generation that serves: only its runs
	// are kept.
	current uint64

	epochs                  atomic.Uint64
	hits, misses, evictions atomic.Uint64
}

type entry struct {
	key     Key
	outs    []*tensor.Tensor
	size    int64
	expires time.Time
}

// flight is a run under way for a key, which identical requests wait for.
type flight struct {
	done chan struct{}
	outs []*tensor.Tensor
	err  error
	// again: the run's answer is not for the waiters (the request that
	// ran it gave up, or its outputs cannot be shared): they ask again.
	again bool
}

// ErrSize is the error of a cache without a positive size.
var ErrSize = errors.New("cache size must be positive")

// New makes an empty cache.
func New(o Options) (*Cache, error) {
	if o.Size <= 0 {
		return nil, ErrSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Cache{opts: o, entries: map[Key]*list.Element{}, flights: map[Key]*flight{}}, nil
}

// Stats reads the cache's figures now.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	b, n := c.bytes, int64(len(c.entries))
	c.mu.Unlock()
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(), Bytes: b, Entries: n, Size: c.opts.Size}
}

// begin starts a generation's epoch: its runs are kept once Serve makes
// it the current one.
func (c *Cache) begin() uint64 { return c.epochs.Add(1) }

// serve makes epoch the current one and empties the cache: what the
// generations before it answered is gone.
func (c *Cache) serve(epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = epoch
	c.lru.Init()
	clear(c.entries)
	c.bytes = 0
}

// Do answers the request of key, run by the generation of epoch, from the
// cache, from an identical request's run under way, or by run, whose
// outputs it keeps when they are tensors and epoch serves. ctl is told
// which. A run that its own request gave up (ctx ended) answers no other
// request: they ask again, one of them running it. Errors are never kept.
func (c *Cache) Do(ctx context.Context, epoch uint64, key Key, ctl *core.CacheControl, run func() (core.Result, error)) (core.Result, error) {
	for {
		c.mu.Lock()
		if outs, ok := c.lookup(key); ok {
			c.mu.Unlock()
			c.hits.Add(1)
			ctl.Status = core.CacheHit
			return core.NewResult(outs), nil
		}
		if f := c.flights[key]; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, core.Canceled(ctx)
			}
			if f.again {
				continue
			}
			if f.err != nil {
				return nil, f.err
			}
			c.hits.Add(1)
			ctl.Status = core.CacheHit
			return core.NewResult(f.outs), nil
		}
		f := &flight{done: make(chan struct{})}
		c.flights[key] = f
		c.mu.Unlock()
		c.misses.Add(1)
		ctl.Status = core.CacheMiss
		return c.lead(ctx, epoch, key, f, run)
	}
}

// lead runs the request for the flight f and settles it.
func (c *Cache) lead(ctx context.Context, epoch uint64, key Key, f *flight, run func() (core.Result, error)) (res core.Result, err error) {
	settled := false
	defer func() {
		if !settled {
			// run panicked: the waiters ask again.
			c.settle(key, f, nil, nil, true, epoch)
		}
	}()
	res, err = run()
	var outs []*tensor.Tensor
	again := false
	switch {
	case err != nil:
		again = ctx.Err() != nil
	default:
		outs = copyOutputs(res)
		again = outs == nil
	}
	c.settle(key, f, outs, err, again, epoch)
	settled = true
	return res, err
}

// settle ends the flight f of key: its outputs are kept when epoch serves.
func (c *Cache) settle(key Key, f *flight, outs []*tensor.Tensor, err error, again bool, epoch uint64) {
	f.outs, f.err, f.again = outs, err, again
	c.mu.Lock()
	delete(c.flights, key)
	if outs != nil && epoch == c.current {
		c.insert(key, outs)
	}
	c.mu.Unlock()
	close(f.done)
}

// lookup finds key's entry and makes it the most recently used; an
// expired entry is removed. c.mu is held.
func (c *Cache) lookup(key Key) ([]*tensor.Tensor, bool) {
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !e.expires.IsZero() && !c.opts.Now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.outs, true
}

// insert keeps outs under key, evicting the least recently used entries
// until they fit; outputs larger than the whole cache are not kept. c.mu
// is held.
func (c *Cache) insert(key Key, outs []*tensor.Tensor) {
	size := entrySize(outs)
	if size > c.opts.Size {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	for c.bytes+size > c.opts.Size {
		c.remove(c.lru.Back())
		c.evictions.Add(1)
	}
	e := &entry{key: key, outs: outs, size: size}
	if c.opts.TTL > 0 {
		e.expires = c.opts.Now().Add(c.opts.TTL)
	}
	c.entries[key] = c.lru.PushFront(e)
	c.bytes += size
}

// remove drops el's entry. c.mu is held.
func (c *Cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.entries, e.key)
	c.bytes -= e.size
}
