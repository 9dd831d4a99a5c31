package oip

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/seq"
)

// The request parameters of sequences, Triton's names, and svc's
// sequence_state.
const (
	// ParamSequenceID names the sequence a request is a step of: a
	// string, or an unsigned integer (the same sequence as its decimal
	// string).
	ParamSequenceID = "sequence_id"
	// ParamSequenceStart starts the sequence (again, if it is active).
	ParamSequenceStart = "sequence_start"
	// ParamSequenceEnd ends the sequence after this step.
	ParamSequenceEnd = "sequence_end"
	// ParamSequenceState asks for the state outputs too; by default a
	// step answers the other outputs only.
	ParamSequenceState = "sequence_state"
)

// Sequence is what a request says of the sequence it is a step of.
type Sequence struct {
	ID                string
	HasID             bool
	Start, End, State bool
	// set is true once any sequence parameter was seen.
	set bool
}

// SetSequenceID sets parameters.sequence_id.
func (r *Request) SetSequenceID(id string) { r.seq.ID, r.seq.HasID, r.seq.set = id, true, true }

// SetSequenceFlag sets one of the boolean sequence parameters by name.
func (r *Request) SetSequenceFlag(name string, b bool) {
	switch name {
	case ParamSequenceStart:
		r.seq.Start = b
	case ParamSequenceEnd:
		r.seq.End = b
	case ParamSequenceState:
		r.seq.State = b
	}
	r.seq.set = true
}

// Sequence is the request's sequence parameters; ok is false when it is
// no step of a sequence.
func (r *Request) Sequence() (Sequence, bool) { return r.seq, r.seq.set }

// IsSequenceFlag reports whether a request parameter is one of the
// boolean sequence parameters.
func IsSequenceFlag(key string) bool {
	return key == ParamSequenceStart || key == ParamSequenceEnd || key == ParamSequenceState
}

// SequenceIDJSON reads parameters.sequence_id from its JSON value: a
// string or an unsigned integer.
func SequenceIDJSON(raw []byte) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badSequenceID()
		}
		return s, nil
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return "", badSequenceID()
	}
	return strconv.FormatUint(n, 10), nil
}

func badSequenceID() error {
	return invalid("Invalid parameters.%s: expected a string or an unsigned integer", ParamSequenceID)
}

// SetSequences gives the view the store of sequences (nil: the server
// keeps none).
func (v *View) SetSequences(s *seq.Store) { v.seqs = s }

// stepOutputs are the outputs a step answers when its request names none:
// every tensor output but the states.
func (v *View) stepOutputs() []RequestedOutput {
	l := v.seqs.Layout()
	out := make([]RequestedOutput, 0, len(v.tensors))
	for _, o := range v.tensors {
		if l == nil || !l.StateOutput(o.Index) {
			out = append(out, o)
		}
	}
	return out
}

// stateInput reports whether input k is a state that the store fills for
// a step of a sequence.
func (v *View) stateInput(k int) bool {
	l := v.seqs.Layout()
	return l != nil && l.StateInput(k)
}

// checkSequence refuses sequence parameters that do not make a step.
func (r *Request) checkSequence() error {
	s := r.seq
	switch {
	case !s.HasID:
		return invalid("parameters.%s, %s and %s need parameters.%s, the sequence's id", ParamSequenceStart, ParamSequenceEnd, ParamSequenceState, ParamSequenceID)
	case s.ID == "" || s.ID == "0":
		return invalid("Invalid parameters.%s: an empty string or 0 names no sequence", ParamSequenceID)
	case r.view.seqs == nil:
		return invalid("%s", seq.ErrStateless.Error())
	}
	if err := r.view.seqs.CheckID(s.ID); err != nil {
		return SequenceError(err)
	}
	return nil
}

// step runs the request as a step of its sequence.
func (v *View) step(ctx context.Context, req *Request) (core.Result, error) {
	outs, err := v.seqs.Step(ctx, seq.Step{ID: req.seq.ID, Start: req.seq.Start, End: req.seq.End, Inputs: req.inputs})
	if err != nil {
		return nil, SequenceError(err)
	}
	return core.NewResult(outs), nil
}

// SequenceError turns the store's refusals into the protocol's: a limit
// reached is KindExhausted, a closed store KindUnavailable, the others
// KindInvalid; errors of the run pass as they are.
func SequenceError(err error) error {
	switch seq.Classify(err) {
	case seq.Exhausted:
		return Errorf(KindExhausted, "%s", err.Error())
	case seq.Unavailable:
		return Errorf(KindUnavailable, "%s", err.Error())
	case seq.Invalid:
		return invalid("%s", err.Error())
	}
	return err
}
