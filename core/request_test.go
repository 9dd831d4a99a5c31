package core

import (
	"context"
	"testing"
	"time"
)

// recorder is a RequestTrace that counts the steps it is told of.
type recorder struct{ steps [4]int }

func (r *recorder) Step(s Step, start, end time.Time, _ int) {
	if !start.IsZero() && !end.Before(start) {
		r.steps[s]++
	}
}

// requestContext is a context as deep as a served request's: the server's,
// the connection's, the request's own values and cancellation.
func requestContext(tb testing.TB) context.Context {
	type k int
	ctx := context.Background()
	for i := range 6 {
		ctx = context.WithValue(ctx, k(i), i)
	}
	ctx, cancel := context.WithCancel(ctx)
	tb.Cleanup(cancel)
	return ctx
}

// hooks reports the steps of a request as the protocols and the scheduler
// do: a decode and an encode step, the run's trace looked up by the
// scheduler twice (the queue and the run).
func hooks(ctx context.Context) {
	began := TraceStart(ctx)
	TraceStep(ctx, StepDecode, began, 0)
	if t := RequestTraceOf(ctx); t != nil {
		now := time.Now()
		t.Step(StepQueue, now, now, 0)
	}
	if t := RequestTraceOf(ctx); t != nil {
		now := time.Now()
		t.Step(StepInfer, now, now, 1)
	}
	TraceStep(ctx, StepEncode, TraceStart(ctx), 0)
}

// TestTraceHooks: the hooks tell a context's trace of every step, and with
// none in the context do nothing.
func TestTraceHooks(t *testing.T) {
	rec := &recorder{}
	hooks(WithRequestTrace(requestContext(t), rec))
	if rec.steps != [4]int{1, 1, 1, 1} {
		t.Errorf("steps recorded %v, want one of each", rec.steps)
	}
	ctx := requestContext(t)
	if RequestTraceOf(ctx) != nil || !TraceStart(ctx).IsZero() {
		t.Error("a context without a trace has one, or its steps read the clock")
	}
	if a := testing.AllocsPerRun(100, func() { hooks(ctx) }); a != 0 {
		t.Errorf("the hooks allocate %v times for a request without a trace", a)
	}
	// In a process that never traced, the same.
	defer traced.Store(traced.Load())
	traced.Store(false)
	if RequestTraceOf(ctx) != nil || !TraceStart(ctx).IsZero() {
		t.Error("a context without a trace has one, or its steps read the clock")
	}
}

// BenchmarkTraceHooksOff is what tracing's hooks cost a request without a
// trace: in a process that never traced (tracing off), an atomic load a
// hook; once some request was traced (tracing on, this one not sampled),
// five context lookups that find nothing. Neither reads the clock.
func BenchmarkTraceHooksOff(b *testing.B) {
	for _, tc := range []struct {
		name   string
		traced bool
	}{{"tracing-off", false}, {"unsampled", true}} {
		b.Run(tc.name, func(b *testing.B) {
			defer traced.Store(traced.Load())
			traced.Store(tc.traced)
			ctx := requestContext(b)
			b.ReportAllocs()
			for b.Loop() {
				hooks(ctx)
			}
		})
	}
}
