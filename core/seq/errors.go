package seq

import (
	"errors"
	"fmt"
)

// Why a sequence ended, as its errors and the metrics say.
const (
	ReasonEnded     = "ended by its client (sequence_end)"
	ReasonExpired   = "expired: no step for longer than sequence.max_idle"
	ReasonRestarted = "restarted by sequence_start"
)

// ErrStateless is returned for a sequence asked of a model without state
// (a 400 for clients).
var ErrStateless = errors.New("the model has no state to keep between steps: it takes no sequence (no state input pairs with an output; declare them in svc.yml under models.NAME.sequence.states)")

// UnknownError is a step for a sequence that is not active, without
// sequence_start (a 400 for clients). Reason says why: "" when svc never
// saw the id (or forgot it), else how it ended.
type UnknownError struct {
	ID     string
	Reason string
}

func (e *UnknownError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("sequence '%s' is unknown: start it with sequence_start", e.ID)
	}
	return fmt.Sprintf("sequence '%s' is no longer active, %s: start it again with sequence_start", e.ID, e.Reason)
}

// LimitError is a new sequence beyond sequence.max_active (a 429 for
// clients, RESOURCE_EXHAUSTED on gRPC).
type LimitError struct {
	ID  string
	Max int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("sequence '%s' not started: %d sequences are active, the most that sequence.max_active allows; end one (sequence_end) or wait for idle ones to expire", e.ID, e.Max)
}

// IDError is a sequence id longer than sequence.max_id_length (a 400 for
// clients, INVALID_ARGUMENT on gRPC). It holds the lengths, not the id.
type IDError struct {
	Length, Max int
}

func (e *IDError) Error() string {
	return fmt.Sprintf("the sequence id is %d bytes long, longer than %d bytes, the most that sequence.max_id_length allows: use a shorter id", e.Length, e.Max)
}

// StepError is a step whose inputs cannot be run as a step of the
// sequence (a 400 for clients).
type StepError struct {
	Input   string
	Message string
}

func (e *StepError) Error() string { return e.Message }

// ClosedError is a step that came after the sequence store was closed
// (the server is stopping or the model reloading: a 503 for clients).
type ClosedError struct{ Reason string }

func (e *ClosedError) Error() string { return "sequences are closed: " + e.Reason }

// Refusal is how a protocol answers an error of a step: the store's
// refusals fall in three classes; errors of the run are NotRefused and
// pass as they are.
type Refusal int

// The classes of Classify.
const (
	NotRefused Refusal = iota
	// Invalid: an unknown or ended sequence, an id too long, a malformed
	// step, a model without state (400, INVALID_ARGUMENT).
	Invalid
	// Exhausted: sequence.max_active reached (429, RESOURCE_EXHAUSTED).
	Exhausted
	// Unavailable: the store is closed, the server stopping (503,
	// UNAVAILABLE).
	Unavailable
)

// Classify says which class of refusal err is, for every protocol alike.
func Classify(err error) Refusal {
	var (
		unknown *UnknownError
		limit   *LimitError
		bad     *StepError
		closed  *ClosedError
		long    *IDError
	)
	switch {
	case errors.As(err, &limit):
		return Exhausted
	case errors.As(err, &closed):
		return Unavailable
	case errors.As(err, &unknown), errors.As(err, &bad), errors.As(err, &long), errors.Is(err, ErrStateless):
		return Invalid
	}
	return NotRefused
}
