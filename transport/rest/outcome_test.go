package rest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// outcomes records the outcome of each request the model is told of.
type outcomes struct {
	core.NopObserver
	mu  sync.Mutex
	got []core.Outcome
}

func (o *outcomes) RequestDone(out core.Outcome, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, out)
}

// TestPredictReportsOutcome: every /predict request ends with one outcome
// reported to the model's observer, and nothing stays in flight.
func TestPredictReportsOutcome(t *testing.T) {
	tests := []struct {
		name      string
		loaded    bool
		runnerErr error
		ct, body  string
		want      core.Outcome
	}{
		{"success", true, nil, "application/json", `{"x": [1, 2]}`, core.OutcomeSuccess},
		{"bad body", true, nil, "application/json", `{"x": "a"}`, core.OutcomeBadRequest},
		{"no content type", true, nil, "", `{"x": [1, 2]}`, core.OutcomeBadRequest},
		{"too large", true, nil, "application/json", `{"x": [` + fmt.Sprint(make([]int, 40)) + `]}`, core.OutcomeBadRequest},
		{"loading", false, nil, "application/json", `{"x": [1, 2]}`, core.OutcomeNotReady},
		{"timeout", true, &core.TimeoutError{After: time.Second}, "application/json", `{"x": [1, 2]}`, core.OutcomeTimeout},
		{"inference", true, &core.InferenceError{Err: fmt.Errorf("boom")}, "application/json", `{"x": [1, 2]}`, core.OutcomeInference},
		{"canceled", true, core.ErrCanceled, "application/json", `{"x": [1, 2]}`, core.OutcomeCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &outcomes{}
			m := core.NewModel("double")
			m.SetObserver(obs)
			h, err := NewHandler(Options{Model: m, Limits: transport.Limits{MaxBodyBytes: 64}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.loaded {
				r := &fakeRunner{err: tt.runnerErr}
				m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{h.Prepare}, nil, nil)
				<-m.Done()
			}
			rec := call(h, "POST", "/predict", tt.ct, tt.body)
			if len(obs.got) != 1 || obs.got[0] != tt.want {
				t.Errorf("status %d: outcomes %v, want [%v]", rec.Code, obs.got, tt.want)
			}
			if n := m.InFlight(); n != 0 {
				t.Errorf("%d requests still in flight", n)
			}
		})
	}
}

// panicRunner panics in Predict.
type panicRunner struct{ fakeRunner }

func (p *panicRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	panic("runner bug")
}

// TestPredictPanicEndsRequest: a panic under /predict (recovered by the
// server's middleware) still ends the request, as an inference failure.
func TestPredictPanicEndsRequest(t *testing.T) {
	obs := &outcomes{}
	m := core.NewModel("double")
	m.SetObserver(obs)
	h, err := NewHandler(Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: &panicRunner{}}, nil }, []core.Preparer{h.Prepare}, nil, nil)
	<-m.Done()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		call(h, "POST", "/predict", "application/json", `{"x": [1, 2]}`)
	}()
	if len(obs.got) != 1 || obs.got[0] != core.OutcomeInference || m.InFlight() != 0 {
		t.Errorf("outcomes %v, %d in flight", obs.got, m.InFlight())
	}
}
