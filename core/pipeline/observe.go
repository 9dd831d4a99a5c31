package pipeline

import (
	"context"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// The stages as Observer names them.
const (
	StageDetector   = "detector"
	StageClassifier = "classifier"
	StageRecognizer = "recognizer"
)

// Observer is told of the page reader's work, for the metrics: each run
// of a stage's model (its stage, the items it held: the page for the
// detector, crops for the classifier and the recogniser; how long it
// took, from the call to its answer, its wait for a slot included), and
// each page read (the lines it answered). Its methods are called
// concurrently.
type Observer interface {
	StageRun(stage string, items int, d time.Duration)
	PageRead(lines int)
}

// observed is a stage's Runner that tells obs of each of its runs.
type observed struct {
	core.Runner
	stage string
	obs   Observer
}

// observe returns r, or r telling obs of its runs when obs is not nil.
func observe(r core.Runner, stage string, obs Observer) core.Runner {
	if obs == nil {
		return r
	}
	return observed{Runner: r, stage: stage, obs: obs}
}

func (r observed) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	items := 0
	if len(inputs) > 0 && inputs[0] != nil && len(inputs[0].Shape) > 0 {
		items = int(inputs[0].Shape[0])
	}
	began := time.Now()
	res, err := r.Runner.Predict(ctx, inputs)
	r.obs.StageRun(r.stage, items, time.Since(began))
	return res, err
}
