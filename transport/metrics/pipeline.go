package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The stages of a pipeline, as its series label them.
var pipelineStages = []string{"detector", "classifier", "recognizer"}

// Stages observes the work of a model made of models (a pipeline: the
// page reader), each series labelled model and stage:
//
//	svc_pipeline_stage_runs_total{model,stage}       counter: runs of the stage's model
//	svc_pipeline_stage_duration_seconds{model,stage} histogram: time of each run, from the call to its answer (its wait for a slot included)
//	svc_pipeline_stage_batch_size{model,stage}       histogram: items per run: the page for the detector, its crops for the classifier and the recognizer
//	svc_pipeline_page_lines{model}                   histogram: lines answered per page read
//
// The stages' runs are also counted as the served model's runs. Its
// methods are safe for concurrent use and allocate nothing.
type Stages struct {
	runs     map[string]prometheus.Counter
	duration map[string]prometheus.Observer
	batch    map[string]prometheus.Observer
	lines    prometheus.Observer
}

// ObserveStages registers the series of the stages of the pipeline
// served as model and returns what observes them.
func (m *Metrics) ObserveStages(model string) (*Stages, error) {
	var reg prometheus.Registerer = m.reg
	if m.worker > 0 {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"worker": strconv.Itoa(m.worker)}, reg)
	}
	stage := []string{"model", "stage"}
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_pipeline_stage_runs_total",
		Help: "Runs of each stage's model of a pipeline (detector, classifier, recognizer).",
	}, stage)
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_pipeline_stage_duration_seconds",
		Help:    "Time of each run of a pipeline's stage, from the call to its answer (its wait for a slot included).",
		Buckets: Buckets,
	}, stage)
	batch := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_pipeline_stage_batch_size",
		Help:    "Items in each run of a pipeline's stage: the page for the detector, its crops for the classifier and the recognizer.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, stage)
	lines := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_pipeline_page_lines",
		Help:    "Lines a pipeline answered for each page read.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"model"})
	for _, c := range []prometheus.Collector{runs, duration, batch, lines} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	s := &Stages{runs: map[string]prometheus.Counter{}, duration: map[string]prometheus.Observer{},
		batch: map[string]prometheus.Observer{}, lines: lines.WithLabelValues(model)}
	for _, st := range pipelineStages {
		s.runs[st] = runs.WithLabelValues(model, st)
		s.duration[st] = duration.WithLabelValues(model, st)
		s.batch[st] = batch.WithLabelValues(model, st)
	}
	return s, nil
}

// StageRun counts one run of stage that held items and took d; a stage
// it does not know is not counted.
func (s *Stages) StageRun(stage string, items int, d time.Duration) {
	runs, ok := s.runs[stage]
	if !ok {
		return
	}
	runs.Inc()
	s.duration[stage].Observe(d.Seconds())
	s.batch[stage].Observe(float64(items))
}

// PageRead counts one page read and the lines it answered.
func (s *Stages) PageRead(lines int) { s.lines.Observe(float64(lines)) }
