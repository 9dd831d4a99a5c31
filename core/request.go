package core

import (
	"context"
	"sync/atomic"
	"time"
)

// Priority is the level a request waits at in the scheduler's queues: a
// request of a higher level overtakes every queued request of a lower
// one; within a level requests keep their arrival order. Work that is
// already running is never interrupted.
type Priority uint8

// The two levels. PriorityNormal is the zero value: what a request that
// says nothing gets.
const (
	PriorityNormal Priority = iota
	PriorityHigh
)

// PriorityFromTriton maps the Triton-style priority parameter to a level:
// 1 is the highest (PriorityHigh); 0 (the default) and every larger number
// are PriorityNormal.
func PriorityFromTriton(n uint64) Priority {
	if n == 1 {
		return PriorityHigh
	}
	return PriorityNormal
}

type priorityKey struct{}

// WithPriority returns ctx carrying p for the scheduler; PriorityNormal
// returns ctx itself.
func WithPriority(ctx context.Context, p Priority) context.Context {
	if p == PriorityNormal {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is the level ctx carries (PriorityNormal: none).
func PriorityOf(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// WithRequestTimeout bounds a request to d from now, capped at bound
// (runtime.timeout; 0: no cap). When the deadline passes, the request
// ends with a TimeoutError (a 504, gRPC DEADLINE_EXCEEDED): a request
// still queued never runs, one running is stopped. d <= 0 leaves ctx
// as it is.
func WithRequestTimeout(ctx context.Context, d, bound time.Duration) (context.Context, context.CancelFunc) {
	return WithRequestDeadline(ctx, time.Time{}, d, bound)
}

// WithRequestDeadline is WithRequestTimeout counted from start, when the
// request arrived (the zero time: now), so that the time it took to read
// and decode counts too.
func WithRequestDeadline(ctx context.Context, start time.Time, d, bound time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	if bound > 0 && d > bound {
		d = bound
	}
	if start.IsZero() {
		start = time.Now()
	}
	return context.WithDeadlineCause(ctx, start.Add(d), &TimeoutError{After: d, Requested: true})
}

// Step is a part of a request's work that a RequestTrace records.
type Step uint8

// The steps of a request, in order.
const (
	// StepDecode: reading the inputs from the request and preprocessing
	// them (pictures, text) into the model's tensors.
	StepDecode Step = iota
	// StepQueue: waiting in the scheduler for a session.
	StepQueue
	// StepInfer: the model's run, which may hold other requests' rows
	// merged with this one's (rows says how many in all).
	StepInfer
	// StepEncode: writing the outputs into the answer.
	StepEncode
)

// RequestTrace records where one request's time went: tracing (in the
// transport) implements it and puts it in the request's context; the
// scheduler and the protocols report each step to it. It must be safe for
// concurrent use. A request without one costs its steps nothing.
type RequestTrace interface {
	// Step records that step s ran from start to end; rows is the batch
	// size of an inference (0 for other steps).
	Step(s Step, start, end time.Time, rows int)
}

type traceKey struct{}

// traced is set once any context has carried a trace: until then (tracing
// off, or nothing sampled yet), RequestTraceOf answers without walking the
// context, so that the steps' hooks cost a request one atomic load each.
var traced atomic.Bool

// WithRequestTrace returns ctx carrying t.
func WithRequestTrace(ctx context.Context, t RequestTrace) context.Context {
	if !traced.Load() {
		traced.Store(true)
	}
	return context.WithValue(ctx, traceKey{}, t)
}

// RequestTraceOf is the trace ctx carries, or nil.
func RequestTraceOf(ctx context.Context) RequestTrace {
	if !traced.Load() {
		return nil
	}
	t, _ := ctx.Value(traceKey{}).(RequestTrace)
	return t
}

// TraceStart is the time a step starts when ctx carries a trace, else the
// zero time (no clock read).
func TraceStart(ctx context.Context) time.Time {
	if RequestTraceOf(ctx) == nil {
		return time.Time{}
	}
	return time.Now()
}

// TraceStep reports step s, begun at start (from TraceStart), as ending
// now to ctx's trace, if any.
func TraceStep(ctx context.Context, s Step, start time.Time, rows int) {
	if t := RequestTraceOf(ctx); t != nil && !start.IsZero() {
		t.Step(s, start, time.Now(), rows)
	}
}
