package core

import (
	"context"
	"errors"
	"time"
)

// Outcome is how an inference request ended, as the metrics count it.
type Outcome uint8

// The outcomes. Every value but OutcomeSuccess is a failure reason.
const (
	OutcomeSuccess Outcome = iota
	// OutcomeBadRequest: the request was rejected before inference (bad
	// body, wrong content type, too large); frontends report it.
	OutcomeBadRequest
	// OutcomeNotReady: the model was loading, warming up or failed.
	OutcomeNotReady
	// OutcomeTimeout: the run went past runtime.timeout.
	OutcomeTimeout
	// OutcomeInference: ONNX Runtime failed (or another unexpected error).
	OutcomeInference
	// OutcomeCanceled: the client went away or the server stopped first.
	OutcomeCanceled
	// OutcomeBusy: the memory the request needed was held by others past
	// its wait (limits.request_memory, limits.memory_wait).
	OutcomeBusy
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"success", "bad_request", "not_ready", "timeout", "inference", "canceled", "busy"}

// String is the outcome's label value ("success", "bad_request",
// "not_ready", "timeout", "inference", "canceled", "busy").
func (o Outcome) String() string {
	if o >= numOutcomes {
		return "inference"
	}
	return outcomeNames[o]
}

// Outcomes lists every outcome, success first.
func Outcomes() []Outcome {
	out := make([]Outcome, numOutcomes)
	for i := range out {
		out[i] = Outcome(i)
	}
	return out
}

// OutcomeOf classifies an error returned by core (nil is a success). Errors
// core does not know count as inference failures; a frontend reports its own
// rejections as OutcomeBadRequest.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeSuccess
	}
	var (
		notReady *NotReadyError
		timeout  *TimeoutError
		input    *InputError
		limit    *LimitError
		busy     *BusyError
	)
	switch {
	case errors.As(err, &input), errors.As(err, &limit):
		return OutcomeBadRequest
	case errors.As(err, &busy):
		return OutcomeBusy
	case errors.As(err, &notReady):
		return OutcomeNotReady
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, ErrCanceled):
		return OutcomeCanceled
	}
	return OutcomeInference
}

// RunObserver is told about the served model's work: each inference request
// as it ends, the time each request spent waiting for a session, and each
// execution of the model. Implementations must be safe for concurrent use
// and cheap (they run on every request); the metrics are one. Figures that
// can be read when wanted (requests in flight, the batcher's queue, the load
// time) are not reported here: read them from Model and Batcher.
type RunObserver interface {
	// RequestDone is called once per inference request a frontend
	// received, with its outcome and the time from Model.BeginRequest to
	// its end (decoding and encoding included).
	RequestDone(o Outcome, d time.Duration)
	// Queued is called once per request that reached the runner, with the
	// time it waited for a free session (0 when it ran at once).
	Queued(d time.Duration)
	// Executed is called once per execution of the model that succeeded:
	// inferences is the number of rows it ran (the batch size summed over
	// the requests merged into it; 1 for a model without a batch
	// dimension), d the time the run took.
	Executed(inferences int, d time.Duration)
}

// NopObserver observes nothing.
type NopObserver struct{}

// RequestDone does nothing.
func (NopObserver) RequestDone(Outcome, time.Duration) {}

// Queued does nothing.
func (NopObserver) Queued(time.Duration) {}

// Executed does nothing.
func (NopObserver) Executed(int, time.Duration) {}

var _ RunObserver = NopObserver{}

// modelObserver forwards to the model's observer once the model is ready:
// the warm-up inference is not counted.
type modelObserver struct{ m *Model }

func (o *modelObserver) counting() bool {
	s := o.m.State()
	return s == StateReady || s == StateDraining
}

func (o *modelObserver) RequestDone(out Outcome, d time.Duration) { o.m.obs.RequestDone(out, d) }

func (o *modelObserver) Queued(d time.Duration) {
	if o.counting() {
		o.m.obs.Queued(d)
	}
}

func (o *modelObserver) Executed(n int, d time.Duration) {
	if o.counting() {
		o.m.runs.Add(1)
		o.m.runNanos.Add(int64(d))
		o.m.obs.Executed(n, d)
	}
}

// RunCounts is the number of runs since the model became ready and the
// time they took (nanoseconds). The scheduler's Go-processor tuner reads
// them.
func (m *Model) RunCounts() (runs, nanos int64) {
	return m.runs.Load(), m.runNanos.Load()
}

// Ended is the number of inference requests ended so far and when the
// last one ended (the zero time before any). The scheduler's memory
// reclaimer reads them.
func (m *Model) Ended() (n int64, last time.Time) {
	n, nanos := m.ended.Load(), m.lastEnd.Load()
	if n == 0 {
		return 0, time.Time{}
	}
	return n, time.Unix(0, nanos)
}

// SetObserver makes obs the model's observer (nil: none). Call it before
// Start.
func (m *Model) SetObserver(obs RunObserver) {
	if obs == nil {
		obs = NopObserver{}
	}
	m.obs = obs
}

// Observer is what the runtime (Batcher, Predictor) reports to: the
// observer given to SetObserver, silent until the model is ready so that
// the warm-up run is not counted.
func (m *Model) Observer() RunObserver { return &m.runObs }

// BeginRequest marks the start of an inference request in a frontend: the
// request counts as in flight until EndRequest. It returns the start time to
// pass to EndRequest.
func (m *Model) BeginRequest() time.Time {
	m.inFlight.Add(1)
	return time.Now()
}

// EndRequest ends a request begun with BeginRequest and reports its outcome
// to the observer.
func (m *Model) EndRequest(start time.Time, o Outcome) {
	now := time.Now()
	m.lastEnd.Store(now.UnixNano())
	m.ended.Add(1)
	m.inFlight.Add(-1)
	m.obs.RequestDone(o, now.Sub(start))
}

// InFlight is the number of inference requests begun and not yet ended.
func (m *Model) InFlight() int64 { return m.inFlight.Load() }
