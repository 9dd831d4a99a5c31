package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-dev/svc/core/budget"
)

// budgetCollector reads the memory budget's figures (core/budget) at
// scrape time.
type budgetCollector struct {
	m                                 *budget.Memory
	size, inUse, peak, reserved, wait *prometheus.Desc
	refused                           *prometheus.Desc
}

func newBudgetCollector(m *budget.Memory) *budgetCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &budgetCollector{
		m:        m,
		size:     d("svc_request_memory_limit_bytes", "The budget of the memory that the requests in flight may hold (limits.request_memory)."),
		inUse:    d("svc_request_memory_bytes", "Memory that the requests in flight hold of the budget now: pictures being decoded, tensors made from pictures and texts, their runs' outputs."),
		peak:     d("svc_request_memory_peak_bytes", "The most memory the requests in flight held of the budget at once."),
		reserved: d("svc_request_memory_reservations_total", "Reservations of the budget granted."),
		wait:     d("svc_request_memory_waits_total", "Reservations that waited for memory other requests held."),
		refused:  d("svc_request_memory_refused_total", "Requests refused by the budget: too_large (more than the whole budget, 413), busy (not free within limits.memory_wait or the request's deadline, 503).", "reason"),
	}
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.size, c.inUse, c.peak, c.reserved, c.wait, c.refused} {
		ch <- d
	}
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Stats()
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(s.Size))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(c.peak, prometheus.GaugeValue, float64(s.Peak))
	ch <- prometheus.MustNewConstMetric(c.reserved, prometheus.CounterValue, float64(s.Reserved))
	ch <- prometheus.MustNewConstMetric(c.wait, prometheus.CounterValue, float64(s.Waited))
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(s.TooLarge), "too_large")
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(s.Busy), "busy")
}

// ObserveBudget registers the memory budget's series, read at scrape
// time.
func (m *Metrics) ObserveBudget(b *budget.Memory) error {
	var reg prometheus.Registerer = m.reg
	if m.worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, reg)
	}
	return reg.Register(newBudgetCollector(b))
}
