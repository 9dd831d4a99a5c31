package rest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// The /predict headers of sequences: Triton's parameters as headers, and
// svc's X-Sequence-State.
const (
	// HeaderSequenceID names the sequence the request is a step of.
	HeaderSequenceID = "X-Sequence-Id"
	// HeaderSequenceStart starts it (again, if it is active).
	HeaderSequenceStart = "X-Sequence-Start"
	// HeaderSequenceEnd ends it after this step.
	HeaderSequenceEnd = "X-Sequence-End"
	// HeaderSequenceState asks for the state outputs too.
	HeaderSequenceState = "X-Sequence-State"
)

// sequenceStep is what a request's headers say of its sequence.
type sequenceStep struct {
	id                string
	start, end, state bool
}

// sequenceHeaders reads the sequence headers; ok is false when the
// request is no step of a sequence.
func sequenceHeaders(r *http.Request) (st sequenceStep, ok bool, err error) {
	flags := []struct {
		name string
		to   *bool
	}{{HeaderSequenceStart, &st.start}, {HeaderSequenceEnd, &st.end}, {HeaderSequenceState, &st.state}}
	for _, f := range flags {
		v, has := r.Header[f.name]
		if !has {
			continue
		}
		ok = true
		b, perr := strconv.ParseBool(strings.TrimSpace(v[0]))
		if perr != nil {
			return st, ok, &tensorjson.Error{Message: fmt.Sprintf("Header %s must be true or false, got '%s'", f.name, truncate(transport.Quote(v[0]), 40))}
		}
		*f.to = b
	}
	v, has := r.Header[HeaderSequenceID]
	if !has {
		if ok {
			return st, ok, &tensorjson.Error{Message: fmt.Sprintf("Headers %s, %s and %s need %s, the sequence's id", HeaderSequenceStart, HeaderSequenceEnd, HeaderSequenceState, HeaderSequenceID)}
		}
		return st, false, nil
	}
	st.id = strings.TrimSpace(v[0])
	if st.id == "" || st.id == "0" {
		return st, true, &tensorjson.Error{Message: fmt.Sprintf("Header %s: an empty id or 0 names no sequence", HeaderSequenceID)}
	}
	return st, true, nil
}

// serveStep serves /predict as a step of a sequence: the body holds the
// inputs but the states, which svc keeps; the answer the outputs but the
// states, unless X-Sequence-State asks for them. The body is checked by
// the decoder, which names the input at fault, not by the OpenAPI
// document (whose schema requires the states).
func (h *Handler) serveStep(ctx context.Context, w http.ResponseWriter, v *view, st sequenceStep, body []byte) core.Outcome {
	store := h.opts.Sequences
	if store == nil {
		WriteError(w, http.StatusBadRequest, seq.ErrStateless.Error())
		return core.OutcomeBadRequest
	}
	l := store.Layout()
	if !l.Stateful() {
		WriteError(w, http.StatusBadRequest, seq.ErrStateless.Error())
		return core.OutcomeBadRequest
	}
	specs := append([]tensor.Spec(nil), v.specs...)
	for i := range specs {
		if l.StateInput(i) {
			specs[i].Required = false
		}
	}
	sc := tensorjson.ScanObject(body)
	if input, over := sc.Over(body, h.opts.Limits.MaxElements); over {
		WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Too many elements: input '%s' takes the request past the limit of %d values", transport.Quote(input), h.opts.Limits.MaxElements))
		return core.OutcomeBadRequest
	}
	inputs, err := decodeRequest(transport.TrimBOM(body), specs, h.opts.Limits.MaxStringBytes, min(sc.Commas+1, h.opts.Limits.MaxElements), &sc)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeBadRequest
	}
	outs, err := store.Step(ctx, seq.Step{ID: st.id, Start: st.start, End: st.end, Inputs: inputs})
	if err != nil {
		status, detail, outcome := stepError(err)
		if status == 0 {
			h.writeErr(w, err)
			return core.OutcomeOf(err)
		}
		WriteError(w, status, detail)
		return outcome
	}
	out := append(body[:0], '{')
	first := true
	for i, t := range outs {
		if l.StateOutput(i) && !st.state {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, v.keys[i]...)
		out = appendValue(out, core.Value{Kind: core.KindTensor, Tensor: t})
	}
	writeJSON(w, append(out, '}'))
	return core.OutcomeSuccess
}

// stepError is the status and detail of a refusal of the store (status 0:
// not one, an error of the run).
func stepError(err error) (int, string, core.Outcome) {
	switch seq.Classify(err) {
	case seq.Exhausted:
		return http.StatusTooManyRequests, err.Error(), core.OutcomeBadRequest
	case seq.Unavailable:
		return http.StatusServiceUnavailable, err.Error(), core.OutcomeNotReady
	case seq.Invalid:
		return http.StatusBadRequest, err.Error(), core.OutcomeBadRequest
	}
	return 0, "", 0
}
