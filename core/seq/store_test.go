package seq

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

func TestLayout(t *testing.T) {
	f32 := func(name string, shape ...int64) core.InputSpec {
		return core.InputSpec{Name: name, Type: "float32", Shape: shape, Kind: core.KindTensor}
	}
	out := func(name string, shape ...int64) core.OutputSpec {
		return core.OutputSpec{Name: name, Type: "float32", Shape: shape, Kind: core.KindTensor}
	}
	named := func(in core.InputSpec, names ...string) core.InputSpec { in.DimNames = names; return in }
	namedOut := func(out core.OutputSpec, names ...string) core.OutputSpec { out.DimNames = names; return out }
	tests := []struct {
		name     string
		info     core.ModelInfo
		declared map[string]string
		want     string // pairs as "in→out@axis" joined by " "
		noBatch  string // part of NoBatch ("" = batchable)
		axes     string // "in A B … out C D …": the batch axes ("": not checked)
		err      string
	}{
		{
			name: "silero vad v5",
			info: (&vad{}).Info(),
			want: "state→stateN@1",
			axes: "in [0 1 -1] out [0 1]",
		},
		{
			name: "lstm h and c by the batch dimension's name",
			info: core.ModelInfo{
				Inputs:  []core.InputSpec{named(f32("x", -1, -1, 8), "batch", "time", ""), named(f32("h", 1, -1, -1), "", "batch", "hidden"), named(f32("c", 1, -1, -1), "", "batch", "hidden")},
				Outputs: []core.OutputSpec{out("y", -1, -1, 8), out("hn", 1, -1, 16), out("cn", 1, -1, 16)},
			},
			want: "h→hn@1 c→cn@1",
			axes: "in [0 1 1] out [0 1 1]",
		},
		{
			name: "time-major lstm: x and y join on the axis named as the states'",
			info: core.ModelInfo{
				Inputs:  []core.InputSpec{named(f32("x", -1, -1, 3), "time", "batch", ""), named(f32("h", 1, -1, 4), "", "batch", ""), named(f32("c", 1, -1, 4), "", "batch", "")},
				Outputs: []core.OutputSpec{namedOut(out("y", -1, 1, -1, 4), "time", "", "batch", ""), namedOut(out("hn", 1, -1, 4), "", "batch", ""), namedOut(out("cn", 1, -1, 4), "", "batch", "")},
			},
			want: "h→hn@1 c→cn@1",
			axes: "in [1 1 1] out [2 1 1]",
		},
		{
			name: "unnamed dimensions: axis 0, the states' only dynamic one",
			info: core.ModelInfo{
				Inputs:  []core.InputSpec{f32("x", -1, 3), f32("h", 1, -1, 4)},
				Outputs: []core.OutputSpec{out("y", -1, 4), out("hn", 1, -1, 4)},
			},
			want: "h→hn@1",
			axes: "in [0 1] out [0 1]",
		},
		{
			name: "decoder cache",
			info: core.ModelInfo{
				Inputs:  []core.InputSpec{named(f32("ids", -1, -1), "batch", "seq"), named(f32("past_key_values.0.key", -1, 4, -1, 8), "batch", "", "past", "")},
				Outputs: []core.OutputSpec{out("logits", -1, -1, 10), out("present.0.key", -1, 4, -1, 8)},
			},
			want: "past_key_values.0.key→present.0.key@0",
			axes: "in [0 0] out [0 0]",
		},
		{
			name:     "declared",
			info:     core.ModelInfo{Inputs: []core.InputSpec{f32("x", -1, 3), f32("memory", -1, 5)}, Outputs: []core.OutputSpec{out("y", -1, 3), out("memory_out", -1, 5)}},
			declared: map[string]string{"memory": "memory_out"},
			want:     "memory→memory_out@0",
		},
		{
			name:    "state without a batch axis",
			info:    core.ModelInfo{Inputs: []core.InputSpec{f32("x", -1, 3), f32("state", 2, 5)}, Outputs: []core.OutputSpec{out("y", -1, 3), out("stateN", 2, 5)}},
			want:    "state→stateN@-1",
			noBatch: `state "state" has no batch axis`,
		},
		{
			name: "stateless",
			info: core.ModelInfo{Inputs: []core.InputSpec{f32("x", -1, 3)}, Outputs: []core.OutputSpec{out("y", -1, 3)}},
			want: "",
		},
		{
			name:     "declared input missing",
			info:     (&vad{}).Info(),
			declared: map[string]string{"hidden": "stateN"},
			err:      `the model has no input "hidden" (inputs: input, state, sr)`,
		},
		{
			name:     "declared output missing",
			info:     (&vad{}).Info(),
			declared: map[string]string{"state": "next"},
			err:      `the model has no output "next" (outputs: output, stateN)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLayout(tt.info, tt.declared)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range l.Pairs {
				got = append(got, fmt.Sprintf("%s→%s@%d", p.Input, p.Output, p.Axis))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("pairs = %q, want %q", g, tt.want)
			}
			if tt.want == "" {
				return
			}
			if axes := fmt.Sprint("in ", l.InAxis, " out ", l.OutAxis); tt.axes != "" && axes != tt.axes {
				t.Errorf("batch axes %s, want %s", axes, tt.axes)
			}
			if !strings.Contains(l.NoBatch, tt.noBatch) || (tt.noBatch == "") != (l.NoBatch == "") {
				t.Errorf("NoBatch = %q, want %q", l.NoBatch, tt.noBatch)
			}
		})
	}
}

// reference runs chunks through the fake model one by one with the state
// carried by hand.
func reference(t *testing.T, chunks [][]float32) []float32 {
	t.Helper()
	m := &vad{}
	state := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 1, 4}, Data: make([]float32, 8)}
	var probs []float32
	for _, c := range chunks {
		in := chunk(c...)
		in[1] = state
		res, err := m.Predict(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := res.Tensor(0)
		probs = append(probs, out.Data.([]float32)[0])
		state, _ = res.Tensor(1)
	}
	return probs
}

func TestStepsCarryState(t *testing.T) {
	s, _, _ := newStore(t, &vad{}, Options{})
	chunks := [][]float32{{1, 2}, {3, 4}, {0.5, 0.25}, {-1, 7}}
	want := reference(t, chunks)
	for i, c := range chunks {
		outs, err := s.Step(context.Background(), Step{ID: "a", Start: i == 0, End: i == len(chunks)-1, Inputs: chunk(c...)})
		if err != nil {
			t.Fatal(err)
		}
		if got := prob(t, outs); got != want[i] {
			t.Errorf("step %d: %v, want %v", i, got, want[i])
		}
	}
	st := s.Stats()
	if st.Started != 1 || st.Ended != 1 || st.Active != 0 || st.Steps != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestStepErrors(t *testing.T) {
	s, c, ticks := newStore(t, &vad{}, Options{MaxActive: 2, MaxIdle: time.Minute})
	ctx := context.Background()
	step := func(id string, start, end bool) error {
		_, err := s.Step(ctx, Step{ID: id, Start: start, End: end, Inputs: chunk(1)})
		return err
	}
	mustOK := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var unknown *UnknownError
	if err := step("nobody", false, false); !errors.As(err, &unknown) || unknown.Reason != "" || err.Error() != "sequence 'nobody' is unknown: start it with sequence_start" {
		t.Errorf("unknown: %v", err)
	}
	mustOK(step("a", true, false))
	mustOK(step("a", false, true))
	if err := step("a", false, false); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "sequence 'a' is no longer active, ended by its client") {
		t.Errorf("after end: %v", err)
	}

	// max_active: two may be active, a third is refused until one ends.
	mustOK(step("b", true, false))
	mustOK(step("c", true, false))
	var limit *LimitError
	if err := step("d", true, false); !errors.As(err, &limit) || !strings.Contains(err.Error(), "2 sequences are active") {
		t.Errorf("beyond max_active: %v", err)
	}
	mustOK(step("c", false, true))
	mustOK(step("d", true, false))

	// Expiry by the reaper: b and d go quiet past max_idle.
	c.advance(time.Minute)
	ticks <- c.Now()
	ticks <- c.Now() // the reaper took the first tick and reaped before taking this one
	if err := step("b", false, false); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "sequence 'b' is no longer active, expired: no step for longer than sequence.max_idle") {
		t.Errorf("expired: %v", err)
	}
	if st := s.Stats(); st.Expired != 2 || st.Active != 0 {
		t.Errorf("stats after expiry %+v", st)
	}

	// Expiry found by the step itself, before the reaper wakes.
	mustOK(step("e", true, false))
	c.advance(time.Minute + time.Second)
	if err := step("e", false, false); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired before the reaper: %v", err)
	}

	// A start on an active id restarts it from the first state.
	mustOK(step("f", true, false))
	outs, err := s.Step(ctx, Step{ID: "f", Start: true, Inputs: chunk(1)})
	mustOK(err)
	if got := prob(t, outs); got != 1+16000 {
		t.Errorf("restarted sequence answered %v, want the first step's %v", got, 1+16000)
	}

	// The state is svc's: a client may not send it.
	in := chunk(1)
	in[1] = &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 1, 4}, Data: make([]float32, 8)}
	var bad *StepError
	if _, err := s.Step(ctx, Step{ID: "f", Inputs: in}); !errors.As(err, &bad) || bad.Input != "state" {
		t.Errorf("state sent: %v", err)
	}

	// EndAll (a reload) ends every sequence, saying why.
	if n := s.EndAll("the model was reloaded"); n != 1 {
		t.Errorf("EndAll ended %d, want 1", n)
	}
	if err := step("f", false, false); err == nil || !strings.Contains(err.Error(), "the model was reloaded") {
		t.Errorf("after EndAll: %v", err)
	}
}

// stateless is a model without state.
type stateless struct{ vad }

func (*stateless) Info() core.ModelInfo {
	return core.ModelInfo{Inputs: []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor}},
		Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor}}}
}

func (*stateless) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 2}}}
}

func TestStatelessModel(t *testing.T) {
	s, _, _ := newStore(t, &stateless{}, Options{})
	_, err := s.Step(context.Background(), Step{ID: "a", Start: true, Inputs: []*tensor.Tensor{nil}})
	if !errors.Is(err, ErrStateless) {
		t.Errorf("err = %v", err)
	}
}

func TestInitialValue(t *testing.T) {
	s, _, _ := newStore(t, &vad{}, Options{Initial: map[string]float64{"state": 0.5}})
	outs, err := s.Step(context.Background(), Step{ID: "a", Start: true, Inputs: chunk(1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := prob(t, outs); got != 1.5+16000 {
		t.Errorf("output %v, want %v", got, 1.5+16000)
	}
	bad := New(Options{Initial: map[string]float64{"nope": 1}}, nil)
	defer bad.Close(context.Background(), "test over")
	if err := bad.Use(&vad{}); err == nil || !strings.Contains(err.Error(), `no state input of that name`) {
		t.Errorf("initial value for a missing state: %v", err)
	}
}

// waitQueued waits until n steps wait in the store's queue.
func waitQueued(s *Store, n int) {
	for len(s.queue) < n {
		runtime.Gosched()
	}
}

// TestBatchAcrossSequences holds the first run, queues one step of each of
// eight sequences behind it, and checks that they share one run and that
// each gets what it would get alone, step after step.
func TestBatchAcrossSequences(t *testing.T) {
	tests := []struct {
		name       string
		o          Options
		wrongRows  bool
		failMerged bool
		wantRun    int    // rows of the run after the held one
		why        string // part of Batching's reason ("": batching stays on)
	}{
		{name: "batched", wantRun: 8},
		{name: "batching off", o: Options{NoBatching: true}, wantRun: 1},
		{name: "max batch 3", o: Options{MaxBatch: 3}, wantRun: 3},
		{name: "outputs that do not split", wrongRows: true, wantRun: 8, why: `output "output" of a run of 8 rows did not have 8 rows on axis 0`},
		{name: "merged runs that fail", failMerged: true, wantRun: 8, why: "a run of 8 steps merged on their batch axes failed (Inference failed: this model runs one row at a time), and each step ran alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &vad{gate: make(chan struct{}), entered: make(chan struct{}), wrongRows: tt.wrongRows, failMerged: tt.failMerged}
			s, _, _ := newStore(t, m, tt.o)
			const n = 8
			chunks := make([][][]float32, n)
			for k := range chunks {
				for i := 0; i < 3; i++ {
					chunks[k] = append(chunks[k], []float32{float32(k), float32(i), float32(k * i)})
				}
			}
			ctx := context.Background()
			// The held run: a sequence of its own.
			held := make(chan error, 1)
			go func() {
				_, err := s.Step(ctx, Step{ID: "held", Start: true, Inputs: chunk(9)})
				held <- err
			}()
			<-m.entered
			got := make([][]float32, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			step := func(k, i int) {
				defer wg.Done()
				outs, err := s.Step(ctx, Step{ID: fmt.Sprint(k), Start: i == 0, Inputs: chunk(chunks[k][i]...)})
				if err != nil {
					errs <- err
					return
				}
				got[k] = append(got[k], prob(t, outs))
			}
			wg.Add(n)
			for k := 0; k < n; k++ {
				go step(k, 0)
			}
			if !tt.o.NoBatching {
				waitQueued(s, n)
			}
			close(m.gate)
			wg.Wait()
			if err := <-held; err != nil {
				t.Fatal(err)
			}
			for i := 1; i < 3; i++ {
				wg.Add(n)
				for k := 0; k < n; k++ {
					go step(k, i)
				}
				wg.Wait()
			}
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for k := 0; k < n; k++ {
				want := reference(t, chunks[k])
				if fmt.Sprint(got[k]) != fmt.Sprint(want) {
					t.Errorf("sequence %d: %v, want %v", k, got[k], want)
				}
			}
			runs := m.runSizes()
			if !tt.o.NoBatching && runs[1] != tt.wantRun {
				t.Errorf("runs %v: the second holds %d rows, want %d", runs, runs[1], tt.wantRun)
			}
			on, why := s.Batching()
			switch {
			case tt.o.NoBatching:
				if on {
					t.Errorf("Batching() = %v, %q", on, why)
				}
			case tt.why == "" && !on, tt.why != "" && (on || !strings.Contains(why, tt.why)):
				t.Errorf("Batching() = %v, %q, want %q", on, why, tt.why)
			}
			if d := s.Describe(m); d.Batching != on || d.NoBatching != why {
				t.Errorf("Describe says batching %v %q, Batching() %v %q", d.Batching, d.NoBatching, on, why)
			}
		})
	}
}

func TestCloseRefusesSteps(t *testing.T) {
	m := &vad{}
	s := New(Options{}, Fixed(m))
	if err := s.Use(m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(context.Background(), Step{ID: "a", Start: true, Inputs: chunk(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background(), "the server is stopping"); err != nil {
		t.Fatal(err)
	}
	var closed *ClosedError
	if _, err := s.Step(context.Background(), Step{ID: "a", Inputs: chunk(1)}); !errors.As(err, &closed) || !strings.Contains(err.Error(), "the server is stopping") {
		t.Errorf("after Close: %v", err)
	}
}

func TestContextCarried(t *testing.T) {
	s, _, _ := newStore(t, &vad{}, Options{Context: map[string]int{"input": 1}})
	ctx := context.Background()
	want := []float32{(0 + 1 + 2) + 0 + 16000, (2 + 3 + 4) + 3 + 16000}
	for i, c := range [][]float32{{1, 2}, {3, 4}} {
		outs, err := s.Step(ctx, Step{ID: "a", Start: i == 0, Inputs: chunk(c...)})
		if err != nil {
			t.Fatal(err)
		}
		if got := prob(t, outs); got != want[i] {
			t.Errorf("step %d: %v, want %v", i, got, want[i])
		}
	}
	var bad *StepError
	if _, err := s.Step(ctx, Step{ID: "a", Inputs: []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{2, 2}, Data: make([]float32, 4)}, nil, chunk()[2]}}); !errors.As(err, &bad) || !strings.Contains(err.Error(), "changed shape") {
		t.Errorf("shape changed: %v", err)
	}
	for _, tt := range []struct {
		ctx  map[string]int
		want string
	}{
		{map[string]int{"nope": 1}, "no input of that name"},
		{map[string]int{"state": 1}, "the input is a state"},
		{map[string]int{"sr": 1}, "last axis is not dynamic"},
		{map[string]int{"input": 0}, "want at least 1"},
	} {
		st := New(Options{Context: tt.ctx}, nil)
		if err := st.Use(&vad{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("context %v: %v, want %q", tt.ctx, err, tt.want)
		}
		st.Close(ctx, "test over")
	}
}

// TestClassify: every refusal of the store falls in its class, and an
// error of the run in none.
func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want Refusal
	}{
		{&UnknownError{ID: "a"}, Invalid},
		{&UnknownError{ID: "a", Reason: ReasonReloaded}, Invalid},
		{fmt.Errorf("step: %w", ErrStateless), Invalid},
		{&StepError{Input: "state", Message: "svc keeps it"}, Invalid},
		{&IDError{Length: 300, Max: 256}, Invalid},
		{&LimitError{ID: "a", Max: 1}, Exhausted},
		{&ClosedError{Reason: ReasonStopping}, Unavailable},
		{errors.New("Inference failed: bad shape"), NotRefused},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestStepCanceledWaitingItsTurn: a step whose request ends while an
// earlier step of its sequence runs fails with core.ErrCanceled and the
// request's cause (a deadline's TimeoutError is a 504, DEADLINE_EXCEEDED
// on gRPC, not a 503), and leaves the state as it was.
func TestStepCanceledWaitingItsTurn(t *testing.T) {
	tests := []struct {
		name  string
		cause error
	}{
		{name: "deadline", cause: &core.TimeoutError{After: time.Second, Requested: true}},
		{name: "client gone", cause: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &vad{gate: make(chan struct{}), entered: make(chan struct{})}
			s, _, _ := newStore(t, m, Options{})
			first := make(chan error, 1)
			go func() {
				_, err := s.Step(context.Background(), Step{ID: "a", Start: true, Inputs: chunk(9)})
				first <- err
			}()
			<-m.entered
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tt.cause)
			_, err := s.Step(ctx, Step{ID: "a", Inputs: chunk(5)})
			if !errors.Is(err, core.ErrCanceled) || !errors.Is(err, tt.cause) {
				t.Errorf("err = %v, want core.ErrCanceled with the cause %v", err, tt.cause)
			}
			close(m.gate)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			outs, err := s.Step(context.Background(), Step{ID: "a", Inputs: chunk(1)})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := prob(t, outs), float32(1+9+16000); got != want {
				t.Errorf("the step after the canceled one answered %v, want %v (the state of the first step alone)", got, want)
			}
		})
	}
}

// TestCloseDeadline: a Close whose context ends while a step runs says
// so, yet still refuses new steps and ends the sequences; the step under
// way finishes.
func TestCloseDeadline(t *testing.T) {
	m := &vad{gate: make(chan struct{}), entered: make(chan struct{})}
	s := New(Options{}, Fixed(m))
	if err := s.Use(m); err != nil {
		t.Fatal(err)
	}
	running := make(chan error, 1)
	go func() {
		_, err := s.Step(context.Background(), Step{ID: "a", Start: true, Inputs: chunk(1)})
		running <- err
	}()
	<-m.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx, "the server is stopping"); err == nil || !strings.Contains(err.Error(), "sequence steps still running at shutdown") {
		t.Errorf("Close past its deadline: %v", err)
	}
	var closed *ClosedError
	if _, err := s.Step(context.Background(), Step{ID: "b", Start: true, Inputs: chunk(1)}); !errors.As(err, &closed) {
		t.Errorf("a step after Close: %v", err)
	}
	if st := s.Stats(); st.Active != 0 {
		t.Errorf("%d sequences active after Close", st.Active)
	}
	close(m.gate)
	if err := <-running; err != nil {
		t.Errorf("the step under way: %v", err)
	}
	// A second Close, once the step is done, waits for the goroutines.
	if err := s.Close(context.Background(), "the server is stopping"); err != nil {
		t.Error(err)
	}
}

// TestQueuedStepCanceled: a step whose request ends while it waits in the
// queue for a run never runs: it fails with core.ErrCanceled and the
// cause, and its sequence's state stays as it was.
func TestQueuedStepCanceled(t *testing.T) {
	m := &vad{gate: make(chan struct{}), entered: make(chan struct{})}
	s, _, _ := newStore(t, m, Options{})
	bg := context.Background()
	held := make(chan error, 1)
	go func() {
		_, err := s.Step(bg, Step{ID: "held", Start: true, Inputs: chunk(9)})
		held <- err
	}()
	<-m.entered
	ctx, cancel := context.WithCancelCause(bg)
	queued := make(chan error, 1)
	go func() {
		_, err := s.Step(ctx, Step{ID: "a", Start: true, Inputs: chunk(5)})
		queued <- err
	}()
	waitQueued(s, 1)
	timeout := &core.TimeoutError{After: time.Second, Requested: true}
	cancel(timeout)
	close(m.gate)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-queued; !errors.Is(err, core.ErrCanceled) || !errors.Is(err, timeout) {
		t.Errorf("queued step: %v, want core.ErrCanceled with the cause %v", err, timeout)
	}
	if runs := m.runSizes(); len(runs) != 1 {
		t.Errorf("runs %v: the canceled step ran", runs)
	}
	outs, err := s.Step(bg, Step{ID: "a", Inputs: chunk(1)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := prob(t, outs), float32(1+16000); got != want {
		t.Errorf("the step after the canceled one answered %v, want %v (the first state)", got, want)
	}
}
