package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-dev/svc/core/codec"
)

// ObserveTexts registers the series of the runs of text (core/codec's
// batches by tokens, text.max_batch_tokens), observed as each run ends:
// svc_text_batch_size (texts per run), svc_text_batch_tokens (its tokens
// padded: its texts × its longest), svc_text_batch_padding_ratio (the
// padding's share of them) and svc_text_tokens_total by kind (text,
// padding), whose ratio is the padding share over every run; for a model
// that takes text only.
func (m *Metrics) ObserveTexts(c *codec.Codec) error {
	var reg prometheus.Registerer = m.reg
	if m.worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, reg)
	}
	size := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "svc_text_batch_size",
		Help:    "Texts in each run of a text model (batched by tokens, text.max_batch_tokens).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	tokens := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "svc_text_batch_tokens",
		Help:    "Tokens of each run of a text model, padded: its texts x the tokens of its longest (at most text.max_batch_tokens).",
		Buckets: prometheus.ExponentialBuckets(16, 2, 12),
	})
	ratio := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "svc_text_batch_padding_ratio",
		Help:    "The padding's share of the tokens of each run of a text model.",
		Buckets: prometheus.LinearBuckets(0.1, 0.1, 10),
	})
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_text_tokens_total",
		Help: "Tokens run by a text model, by kind: text (the texts' own) and padding.",
	}, []string{"kind"})
	if err := reg.Register(&textCollector{codec: c, series: []prometheus.Collector{size, tokens, ratio, total}}); err != nil {
		return err
	}
	text, pad := total.WithLabelValues("text"), total.WithLabelValues("padding")
	c.ObserveBatches(func(b codec.TextBatch) {
		size.Observe(float64(b.Size))
		tokens.Observe(float64(b.Padded))
		if b.Padded > 0 {
			ratio.Observe(float64(b.Padded-b.Tokens) / float64(b.Padded))
		}
		text.Add(float64(b.Tokens))
		pad.Add(float64(b.Padded - b.Tokens))
	})
	return nil
}

// textCollector collects the series of the runs of text for a model that
// takes text only: another model shows none. It is unchecked (Describe
// sends nothing), since what it collects depends on the model.
type textCollector struct {
	codec  *codec.Codec
	series []prometheus.Collector
}

func (c *textCollector) Describe(chan<- *prometheus.Desc) {}

func (c *textCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.codec.HasText() {
		return
	}
	for _, s := range c.series {
		s.Collect(ch)
	}
}
