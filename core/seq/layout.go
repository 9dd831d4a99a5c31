// Package seq keeps the state of stateful models between the steps of a
// sequence (voice activity detection, recurrent networks, decoders with a
// cache): it pairs each state input with the output that carries it on,
// holds every active sequence's state, runs each sequence's steps strictly
// in order, frees sequences that went quiet, and runs the steps of
// different sequences that arrive together as one batch. It is pure Go over
// core.Runner: it never calls ONNX Runtime itself.
package seq

import (
	"fmt"
	"sort"
	"strings"

	"github.com/svc-dev/svc/core"
)

// Pair is one state: the input that takes it and the output that gives
// the next step's value.
type Pair struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	// In and Out are the indexes of the input and output in the model's
	// order.
	In  int `json:"-"`
	Out int `json:"-"`
	// Axis is the state's batch axis, along which the states of several
	// sequences are joined into one run (-1: none found, no batching).
	Axis int `json:"batch_axis"`
	// Declared is true when svc.yml named the pair, false when found by
	// convention.
	Declared bool `json:"declared"`
}

// Layout is how a model's steps are run: its state pairs and, for every
// input and output, the axis that its rows lie on (-1: none).
type Layout struct {
	Pairs []Pair
	// InAxis and OutAxis give the batch axis of each input and output.
	InAxis, OutAxis []int
	// NoBatch says why steps of different sequences cannot share a run
	// ("" when they can).
	NoBatch string
	info    core.ModelInfo
}

// Stateful reports whether the model has state to keep.
func (l *Layout) Stateful() bool { return l != nil && len(l.Pairs) > 0 }

// StateInput reports whether input i is a state.
func (l *Layout) StateInput(i int) bool {
	for _, p := range l.Pairs {
		if p.In == i {
			return true
		}
	}
	return false
}

// StateOutput reports whether output i is a state.
func (l *Layout) StateOutput(i int) bool {
	for _, p := range l.Pairs {
		if p.Out == i {
			return true
		}
	}
	return false
}

// conventions pair state inputs with outputs by name: an input named as
// the key (or starting with it, for a prefix ending in ".") gives its state
// to the output named by replacing the key with the value.
var conventions = []struct{ in, out string }{
	{"state", "stateN"},
	{"h", "hn"},
	{"c", "cn"},
	{"h0", "hn"},
	{"c0", "cn"},
	{"past_key_values.", "present."},
}

// FindPairs pairs the model's state inputs with their outputs: those
// declared (input name → output name, from svc.yml's
// models.NAME.sequence.states), or, when none are declared, by the
// conventions state → stateN, h/c → hn/cn and past_key_values.* →
// present.*. A declared name that the model lacks is an error.
func FindPairs(info core.ModelInfo, declared map[string]string) ([]Pair, error) {
	ins := map[string]int{}
	for i, in := range info.Inputs {
		ins[in.Name] = i
	}
	outs := map[string]int{}
	for i, out := range info.Outputs {
		outs[out.Name] = i
	}
	var pairs []Pair
	if len(declared) > 0 {
		names := make([]string, 0, len(declared))
		for k := range declared {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, in := range names {
			out := declared[in]
			i, ok := ins[in]
			if !ok {
				return nil, fmt.Errorf("sequence state %q: the model has no input %q (inputs: %s)", in, in, inputNames(info))
			}
			o, ok := outs[out]
			if !ok {
				return nil, fmt.Errorf("sequence state %q: the model has no output %q (outputs: %s)", in, out, outputNames(info))
			}
			pairs = append(pairs, Pair{Input: in, Output: out, In: i, Out: o, Declared: true})
		}
	} else {
		for i, in := range info.Inputs {
			for _, c := range conventions {
				var out string
				switch {
				case strings.HasSuffix(c.in, "."):
					if !strings.HasPrefix(in.Name, c.in) {
						continue
					}
					out = c.out + strings.TrimPrefix(in.Name, c.in)
				case in.Name == c.in:
					out = c.out
				default:
					continue
				}
				if o, ok := outs[out]; ok {
					pairs = append(pairs, Pair{Input: in.Name, Output: out, In: i, Out: o})
					break
				}
			}
		}
	}
	for _, p := range pairs {
		in, out := info.Inputs[p.In], info.Outputs[p.Out]
		if in.Kind != core.KindTensor || out.Kind != core.KindTensor {
			return nil, fmt.Errorf("sequence state %q → %q: both must be tensors", p.Input, p.Output)
		}
		if in.Type != out.Type {
			return nil, fmt.Errorf("sequence state %q is %s but output %q is %s", p.Input, in.Type, p.Output, out.Type)
		}
		if in.Shape == nil {
			return nil, fmt.Errorf("sequence state %q has no known rank: svc cannot make its first value", p.Input)
		}
	}
	return pairs, nil
}

// NewLayout finds the model's state pairs (see FindPairs) and the batch
// axis of every input, output and state. The batch dimension is known by
// its name where the model names it: the name of the states' only dynamic
// axis (Silero VAD's state [2, B, 128], an LSTM's h [1, batch, hidden]),
// or else the name of the other inputs' dynamic first axis. Every input
// and output then has its batch on the axis of that name, so a time-major
// input [time, batch, features] joins on axis 1; one that does not name it
// has its batch on axis 0 when that is dynamic. A state without the name
// has its batch on its only dynamic axis. An input without a batch axis (a
// scalar such as a sample rate) must be equal in the steps that share a
// run.
func NewLayout(info core.ModelInfo, declared map[string]string) (*Layout, error) {
	pairs, err := FindPairs(info, declared)
	if err != nil {
		return nil, err
	}
	l := &Layout{Pairs: pairs, info: info, InAxis: make([]int, len(info.Inputs)), OutAxis: make([]int, len(info.Outputs))}
	state := map[int]bool{}
	for _, p := range pairs {
		state[p.In] = true
	}
	batchName := batchDimName(info, pairs, state)
	for i, in := range info.Inputs {
		l.InAxis[i] = -1
		if !state[i] && in.Kind == core.KindTensor {
			l.InAxis[i] = rowAxis(in.Shape, in.DimNames, batchName)
		}
	}
	for k := range l.Pairs {
		p := &l.Pairs[k]
		p.Axis = stateAxis(info.Inputs[p.In], batchName)
		l.InAxis[p.In] = p.Axis
	}
	outState := map[int]int{}
	for _, p := range pairs {
		outState[p.Out] = p.Axis
	}
	for i, out := range info.Outputs {
		l.OutAxis[i] = -1
		if a, ok := outState[i]; ok {
			l.OutAxis[i] = a
			continue
		}
		if out.Kind == core.KindTensor {
			l.OutAxis[i] = rowAxis(out.Shape, out.DimNames, batchName)
		}
	}
	l.NoBatch = noBatch(l, info)
	return l, nil
}

// batchDimName is the name of the batch dimension ("" when the model does
// not tell it): the name that every state's only dynamic axis bears, if
// another input bears it too; else the name of the first non-state
// input's dynamic first axis.
func batchDimName(info core.ModelInfo, pairs []Pair, state map[int]bool) string {
	name := ""
	for _, p := range pairs {
		in := info.Inputs[p.In]
		a := onlyDynamic(in.Shape)
		if a < 0 || a >= len(in.DimNames) || in.DimNames[a] == "" || (name != "" && in.DimNames[a] != name) {
			name = ""
			break
		}
		name = in.DimNames[a]
	}
	for i, in := range info.Inputs {
		if name != "" && !state[i] && axisNamed(in.Shape, in.DimNames, name) >= 0 {
			return name
		}
	}
	for i, in := range info.Inputs {
		if !state[i] && in.Kind == core.KindTensor && len(in.Shape) > 0 && in.Shape[0] < 0 && len(in.DimNames) > 0 && in.DimNames[0] != "" {
			return in.DimNames[0]
		}
	}
	return ""
}

// rowAxis is the batch axis of an input or output that is no state: the
// dynamic axis named batchName, or else axis 0 when it is dynamic (-1:
// none).
func rowAxis(shape []int64, names []string, batchName string) int {
	if a := axisNamed(shape, names, batchName); a >= 0 {
		return a
	}
	if len(shape) > 0 && shape[0] < 0 {
		return 0
	}
	return -1
}

// axisNamed is the dynamic axis called name (-1: none, or name is "").
func axisNamed(shape []int64, names []string, name string) int {
	if name == "" {
		return -1
	}
	for a, n := range names {
		if n == name && a < len(shape) && shape[a] < 0 {
			return a
		}
	}
	return -1
}

// onlyDynamic is the one dynamic axis of shape (-1: none, or several).
func onlyDynamic(shape []int64) int {
	axis := -1
	for a, d := range shape {
		if d < 0 {
			if axis >= 0 {
				return -1
			}
			axis = a
		}
	}
	return axis
}

// stateAxis is the batch axis of a state input (-1: none can be told):
// the dynamic axis named batchName, or else its only dynamic axis.
func stateAxis(in core.InputSpec, batchName string) int {
	if a := axisNamed(in.Shape, in.DimNames, batchName); a >= 0 {
		return a
	}
	return onlyDynamic(in.Shape)
}

// noBatch says why the layout cannot join steps into one run, "" if it
// can.
func noBatch(l *Layout, info core.ModelInfo) string {
	for _, p := range l.Pairs {
		if p.Axis < 0 {
			return fmt.Sprintf("state %q has no batch axis that svc can tell (name it with a dimension shared by the other inputs, or leave a single dynamic axis)", p.Input)
		}
	}
	batched := false
	for i := range info.Inputs {
		if l.InAxis[i] >= 0 && !l.StateInput(i) {
			batched = true
		}
	}
	if !batched {
		return "no input other than the state has a dynamic batch dimension"
	}
	for i, out := range info.Outputs {
		if l.OutAxis[i] < 0 {
			return fmt.Sprintf("output %q has no dynamic batch dimension", out.Name)
		}
	}
	return ""
}

func inputNames(info core.ModelInfo) string {
	names := make([]string, len(info.Inputs))
	for i, in := range info.Inputs {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

func outputNames(info core.ModelInfo) string {
	names := make([]string, len(info.Outputs))
	for i, out := range info.Outputs {
		names[i] = out.Name
	}
	return strings.Join(names, ", ")
}

// Description is what /info says of a stateful model's sequences.
type Description struct {
	// States are the state pairs, with their batch axes.
	States []Pair `json:"states"`
	// Context is the elements carried along an input's last axis.
	Context map[string]int `json:"context,omitempty"`
	// Batching says whether steps of different sequences share runs;
	// NoBatching says why not.
	Batching   bool    `json:"batching"`
	NoBatching string  `json:"no_batching,omitempty"`
	MaxIdleS   float64 `json:"max_idle_s"`
	MaxActive  int     `json:"max_active"`
}

// Describe says how the store runs the sequences of the model r runs (nil
// for a model without state).
func (s *Store) Describe(r core.Runner) *Description {
	l, err := NewLayout(r.Info(), s.o.States)
	if err != nil || !l.Stateful() {
		return nil
	}
	d := &Description{States: l.Pairs, Context: s.o.Context, Batching: true, MaxIdleS: s.o.MaxIdle.Seconds(), MaxActive: s.o.MaxActive}
	switch {
	case s.o.NoBatching:
		d.Batching, d.NoBatching = false, "sequence.batching is false"
	case l.NoBatch != "":
		d.Batching, d.NoBatching = false, l.NoBatch
	default:
		if on, why := s.Batching(); !on && s.Layout() != nil {
			d.Batching, d.NoBatching = false, why
		}
	}
	return d
}
