package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-dev/svc/core/seq"
)

// SequenceStats are the sequences' figures in /v2/models/{name}/stats:
// the store's counters (summed over the workers under --workers) and the
// steps' cumulative time.
type SequenceStats struct {
	seq.Stats
	// Step: steps answered, and their time (queue included).
	Step Duration `json:"step"`
}

func (s *SequenceStats) add(o *SequenceStats) {
	s.Active += o.Active
	s.Started += o.Started
	s.Ended += o.Ended
	s.Expired += o.Expired
	s.Steps += o.Steps
	s.Runs += o.Runs
	s.Batched += o.Batched
	s.Step.Count += o.Step.Count
	s.Step.Ns += o.Step.Ns
}

// sequenceCollector reads the store's counters at scrape time, and
// collects the steps' histogram, for a stateful model only: a model
// without state shows none of the sequences' series. It is unchecked
// (Describe sends nothing), since what it collects depends on the model.
type sequenceCollector struct {
	store                                               *seq.Store
	step                                                prometheus.Histogram
	active, started, ended, expired, steps, runs, batch *prometheus.Desc
}

func newSequenceCollector(s *seq.Store, step prometheus.Histogram) *sequenceCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &sequenceCollector{
		store:   s,
		step:    step,
		active:  d("svc_sequences_active", "Sequences whose state svc holds now."),
		started: d("svc_sequences_started_total", "Sequences started (sequence_start), restarts included."),
		ended:   d("svc_sequences_ended_total", "Sequences ended: by sequence_end, a restart, a reload or the server stopping."),
		expired: d("svc_sequences_expired_total", "Sequences freed after sequence.max_idle without a step."),
		steps:   d("svc_sequence_steps_total", "Steps of sequences answered."),
		runs:    d("svc_sequence_runs_total", "Model runs for steps of sequences."),
		batch:   d("svc_sequence_batched_runs_total", "Model runs that held the steps of several sequences (sequence.batching)."),
	}
}

func (c *sequenceCollector) Describe(chan<- *prometheus.Desc) {}

func (c *sequenceCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.store.Layout().Stateful() {
		return
	}
	c.step.Collect(ch)
	st := c.store.Stats()
	ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, float64(st.Active))
	for _, v := range []struct {
		d *prometheus.Desc
		n uint64
	}{{c.started, st.Started}, {c.ended, st.Ended}, {c.expired, st.Expired}, {c.steps, st.Steps}, {c.runs, st.Runs}, {c.batch, st.Batched}} {
		ch <- prometheus.MustNewConstMetric(v.d, prometheus.CounterValue, float64(v.n))
	}
}

// ObserveSequences registers the store's metrics: the counters, read at
// scrape time, and svc_sequence_step_duration_seconds, observed as each
// step ends.
func (m *Metrics) ObserveSequences(s *seq.Store) error {
	var reg prometheus.Registerer = m.reg
	if m.worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, reg)
	}
	step := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "svc_sequence_step_duration_seconds",
		Help:    "Time of each step of a sequence, from its arrival at the store (waiting for the steps before it and for its run included) to its outputs.",
		Buckets: Buckets,
	})
	if err := reg.Register(newSequenceCollector(s, step)); err != nil {
		return err
	}
	m.seqs = s
	s.SetOnStep(func(d time.Duration) {
		step.Observe(d.Seconds())
		m.stats.stepCount.Add(1)
		m.stats.stepNs.Add(uint64(max(d, 0)))
	})
	return nil
}

// sequenceSnapshot is the sequences' statistics (nil: no stateful model).
func (m *Metrics) sequenceSnapshot() *SequenceStats {
	if m.seqs == nil || !m.seqs.Layout().Stateful() {
		return nil
	}
	return &SequenceStats{Stats: m.seqs.Stats(), Step: Duration{m.stats.stepCount.Load(), m.stats.stepNs.Load()}}
}
