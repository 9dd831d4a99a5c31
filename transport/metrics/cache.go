package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-dev/svc/core/cache"
)

// cacheCollector reads the response cache's figures (core/cache) at
// scrape time.
type cacheCollector struct {
	c                                    *cache.Cache
	hits, misses, bytes, evictions, size *prometheus.Desc
	entries                              *prometheus.Desc
}

func newCacheCollector(c *cache.Cache) *cacheCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &cacheCollector{
		c:         c,
		hits:      d("svc_cache_hits_total", "Requests answered by the response cache: a kept answer, or the run of an identical request under way."),
		misses:    d("svc_cache_misses_total", "Requests the response cache could have answered that ran the model (bypasses are neither hits nor misses)."),
		bytes:     d("svc_cache_bytes", "Bytes the response cache's entries hold now, keys and outputs."),
		evictions: d("svc_cache_evictions_total", "Entries of the response cache removed, least recently used first, to make room."),
		size:      d("svc_cache_limit_bytes", "The bytes the response cache may hold (models.NAME.cache.size)."),
		entries:   d("svc_cache_entries", "Answers the response cache holds now."),
	}
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.hits, c.misses, c.bytes, c.evictions, c.size, c.entries} {
		ch <- d
	}
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.c.Stats()
	ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(s.Hits))
	ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(s.Misses))
	ch <- prometheus.MustNewConstMetric(c.evictions, prometheus.CounterValue, float64(s.Evictions))
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(s.Bytes))
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(s.Size))
	ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(s.Entries))
}

// ObserveCache registers the response cache's series, read at scrape
// time, and puts its figures in /v2/models/{name}/stats.
func (m *Metrics) ObserveCache(c *cache.Cache) error {
	var reg prometheus.Registerer = m.reg
	if m.worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, reg)
	}
	if err := reg.Register(newCacheCollector(c)); err != nil {
		return err
	}
	m.cache = c
	return nil
}

// cacheSnapshot is the cache's statistics (nil: no cache).
func (m *Metrics) cacheSnapshot() *cache.Stats {
	if m.cache == nil {
		return nil
	}
	s := m.cache.Stats()
	return &s
}
