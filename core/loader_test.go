package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// stubProvider is an execution provider by name.
type stubProvider string

func (p stubProvider) Name() string        { return string(p) }
func (p stubProvider) ORTName() string     { return string(p) + "ExecutionProvider" }
func (p stubProvider) Platform() string    { return "test" }
func (p stubProvider) Description() string { return "" }

// stubSchedule is a schedule of one scalar input and output that echoes.
type stubSchedule struct {
	runs   int
	closed bool
}

func (s *stubSchedule) Info() core.ModelInfo {
	return core.ModelInfo{Name: "m", Inputs: []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{}, Required: true, Kind: core.KindTensor}}}
}

func (s *stubSchedule) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{}, Required: true}}
}

func (s *stubSchedule) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	s.runs++
	return core.NewResult(in), nil
}

func (s *stubSchedule) Provider() core.Provider { return stubProvider("cpu") }
func (s *stubSchedule) Stats() core.SchedStats  { return core.SchedStats{Sessions: 2, GoProcs: 3} }
func (s *stubSchedule) Close() error            { s.closed = true; return nil }

type stubScheduler struct {
	s   *stubSchedule
	err error
}

func (s stubScheduler) Schedule(core.Opener) (core.Schedule, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.s, nil
}

type stubOpener struct {
	placement core.Placement
	err       error
}

func (o stubOpener) Open(int) (core.Session, error) { return nil, errors.New("not used") }
func (o stubOpener) Placement(core.Provider) (core.Placement, error) {
	return o.placement, o.err
}

// TestLoader: the Loader schedules what the Opener opens, warms the model
// up, finds out where its nodes run when it warms up, and reports a
// scheduling failure as the model's.
func TestLoader(t *testing.T) {
	tests := []struct {
		name      string
		warmUp    bool
		opener    stubOpener
		schedErr  error
		state     core.State
		runs      int
		placement string
		log       string
	}{
		{"warm-up and placement", true, stubOpener{placement: core.Placement{{Provider: "cpuExecutionProvider", Nodes: core.AllNodes}}},
			nil, core.StateReady, 1, "all on cpuExecutionProvider", "node placement"},
		{"no warm-up: no placement", false, stubOpener{}, nil, core.StateReady, 0, "", ""},
		{"placement not probed", true, stubOpener{}, nil, core.StateReady, 1, "", "node placement not probed"},
		{"placement failed", true, stubOpener{err: errors.New("no profile")}, nil, core.StateReady, 1, "", "cannot tell where ONNX Runtime placed the nodes"},
		{"scheduling failed", true, stubOpener{}, errors.New("no session"), core.StateFailed, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, logs := observer.New(zap.InfoLevel)
			m := core.NewModel("m")
			sc := &stubSchedule{}
			l := core.NewLoader(m, tt.opener, stubScheduler{sc, tt.schedErr}, core.LoadOptions{WarmUp: tt.warmUp}, zap.New(obs))
			l.Start()
			<-m.Done()
			if m.State() != tt.state {
				t.Fatalf("state %v, want %v (%v)", m.State(), tt.state, m.Err())
			}
			if tt.schedErr != nil {
				if !errors.Is(m.Err(), tt.schedErr) {
					t.Fatalf("Err() = %v", m.Err())
				}
				return
			}
			if sc.runs != tt.runs {
				t.Fatalf("%d warm-up runs, want %d", sc.runs, tt.runs)
			}
			if got := m.Placement().String(); got != tt.placement {
				t.Fatalf("placement %q, want %q", got, tt.placement)
			}
			if tt.log != "" && logs.FilterMessageSnippet(tt.log).Len() != 1 {
				t.Fatalf("no log line %q in %v", tt.log, logs.All())
			}
			if st, ok := m.Stats(); !ok || st.Sessions != 2 || st.GoProcs != 3 {
				t.Fatalf("Stats() = %+v, %v", st, ok)
			}
			if m.Provider().Name() != "cpu" {
				t.Fatalf("provider %v", m.Provider())
			}
			if err := m.Close(context.Background()); err != nil || !sc.closed {
				t.Fatalf("Close: %v, closed %v", err, sc.closed)
			}
		})
	}
}

// TestModelStatsBeforeLoad: no scheduler state until the model has loaded.
func TestModelStatsBeforeLoad(t *testing.T) {
	if _, ok := core.NewModel("m").Stats(); ok {
		t.Fatal("stats before loading")
	}
}

func TestBatchable(t *testing.T) {
	tensorIn := func(name string, shape []int64, dims ...string) core.InputSpec {
		return core.InputSpec{Name: name, Type: "float32", Shape: shape, DimNames: dims, Kind: core.KindTensor}
	}
	tensorOut := func(name string, shape []int64) core.OutputSpec {
		return core.OutputSpec{Name: name, Type: "float32", Shape: shape, Kind: core.KindTensor}
	}
	tests := []struct {
		name string
		info core.ModelInfo
		want string // "" = batchable
	}{
		{"batch dimension everywhere", core.ModelInfo{
			Inputs:  []core.InputSpec{tensorIn("a", []int64{-1, 4}, "n", ""), tensorIn("b", []int64{-1}, "n")},
			Outputs: []core.OutputSpec{tensorOut("y", []int64{-1, 2})}}, ""},
		{"no inputs", core.ModelInfo{}, "the model has no inputs"},
		{"a fixed first dimension", core.ModelInfo{Inputs: []core.InputSpec{tensorIn("x", []int64{1, 4})}}, `input "x" has no dynamic batch dimension`},
		{"a scalar input", core.ModelInfo{Inputs: []core.InputSpec{tensorIn("x", []int64{})}}, `input "x" has no dynamic batch dimension`},
		{"named apart", core.ModelInfo{Inputs: []core.InputSpec{tensorIn("a", []int64{-1}, "n"), tensorIn("b", []int64{-1}, "m")}},
			`inputs disagree on the batch dimension ("n" and "m")`},
		{"a map output", core.ModelInfo{Inputs: []core.InputSpec{tensorIn("x", []int64{-1})},
			Outputs: []core.OutputSpec{{Name: "p", Kind: core.KindSequence}}}, `output "p" has no dynamic batch dimension`},
	}
	for _, tt := range tests {
		err := core.Batchable(tt.info)
		if (err == nil) != (tt.want == "") || (err != nil && err.Error() != tt.want) {
			t.Errorf("%s: Batchable = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestTensorResult: a result of Go tensors releases its share once, however
// often Release is called, and Close gives nothing back.
func TestTensorResult(t *testing.T) {
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1}, Data: []float32{2}}
	released := 0
	r := core.NewResultReleasing([]*tensor.Tensor{x}, func() { released++ })
	if r.Len() != 1 {
		t.Fatalf("Len() = %d", r.Len())
	}
	if got, _ := r.Tensor(0); got != x {
		t.Fatal("Tensor(0) is not the tensor given")
	}
	if v, _ := r.Value(0); v.Kind != core.KindTensor || v.Tensor != x {
		t.Fatalf("Value(0) = %+v", v)
	}
	r.Close()
	if released != 0 {
		t.Fatal("Close released the share")
	}
	r.Release()
	r.Release()
	if released != 1 {
		t.Fatalf("released %d times, want 1", released)
	}
	if n := core.NewResult(nil).Len(); n != 0 {
		t.Fatalf("an empty result has %d outputs", n)
	}
	core.NewResult(nil).Release() // nothing to release: fine
}

func TestPlacementString(t *testing.T) {
	p := core.Placement{{Provider: "WebGpuExecutionProvider", Nodes: 175}, {Provider: "CPUExecutionProvider", Nodes: 18}}
	if got := p.String(); got != "WebGpuExecutionProvider 175, CPUExecutionProvider 18" {
		t.Fatalf("String() = %q", got)
	}
	if p.Of("CPUExecutionProvider") != 18 || p.Of("CUDAExecutionProvider") != 0 {
		t.Fatal("Of")
	}
	if !strings.HasPrefix(core.Placement{{Provider: "CPUExecutionProvider", Nodes: core.AllNodes}}.String(), "all on ") {
		t.Fatal("AllNodes")
	}
}
