package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// InferenceError is a failure inside ONNX Runtime while running the model
// (a 500 for clients).
type InferenceError struct{ Err error }

func (e *InferenceError) Error() string { return "Inference failed: " + e.Err.Error() }
func (e *InferenceError) Unwrap() error { return e.Err }

// TimeoutError is an inference stopped because it ran past the configured
// timeout (a 504 for clients).
// Requested says the timeout was the request's own (its timeout
// parameter or header), which counts the time it waited in the queue.
type TimeoutError struct {
	After     time.Duration
	Requested bool
}

func (e *TimeoutError) Error() string {
	if e.Requested {
		return fmt.Sprintf("Request timed out: its timeout of %s passed before inference finished", e.After)
	}
	return fmt.Sprintf("Inference timed out after %s", e.After)
}

// ErrCanceled is returned when the caller gave up (client disconnected or
// server shutting down) and the run was stopped.
var ErrCanceled = errors.New("inference canceled")

// Canceled is the error of work that ctx ended before it ran or finished:
// ErrCanceled wrapping ctx's cause (a *TimeoutError for a request whose
// own timeout passed, context.Canceled for a client gone), so that each
// protocol answers it as what it was.
func Canceled(ctx context.Context) error {
	return fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
}

// InputError is a request whose inputs the model cannot take, found before
// ONNX Runtime runs (a 400 for clients). Input names the input at fault;
// Message is the whole message for the client.
type InputError struct {
	Input   string
	Message string
}

func (e *InputError) Error() string { return e.Message }

// LimitError is a request refused because it asks for more than a limit
// allows, found before the work it would cost starts (a 413 for clients,
// RESOURCE_EXHAUSTED on gRPC). Key is the configuration key that sets the
// limit; Message, the whole message for the client, names it.
type LimitError struct {
	Key     string
	Message string
}

func (e *LimitError) Error() string { return e.Message }

// BusyError is a request refused because the server holds, for the
// requests in flight, what this one needs, and it did not come free in
// time (a 503 with Retry-After for clients, UNAVAILABLE on gRPC).
type BusyError struct {
	Message    string
	RetryAfter time.Duration
}

func (e *BusyError) Error() string { return e.Message }
