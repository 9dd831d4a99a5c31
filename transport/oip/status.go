package oip

import (
	"encoding/json"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// httpError is a refusal of HTTP's own, which the protocol has no kind
// for (an unreadable body, a Content-Type): its status and message.
type httpError struct {
	status  int
	message string
	// cause is the error answered, when there is one (a body that the
	// memory budget refused: Retry-After and the outcome follow it).
	cause error
}

func (e *httpError) Error() string { return e.message }
func (e *httpError) Unwrap() error { return e.cause }

// kindStatus is the HTTP status of each kind of refusal.
func kindStatus(k Kind) int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindNotFound:
		return http.StatusNotFound
	case KindExhausted:
		return http.StatusTooManyRequests
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// WriteError writes the protocol's error body, {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Del(HeaderInferenceHeaderLength)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorStatus maps a refusal of the protocol or of HTTP, an error of the
// JSON codec or of core to its status and message: the one place they
// meet HTTP here. known is false for an unexpected error, which the
// caller logs.
func errorStatus(err error) (status int, msg string, known bool) {
	var (
		own     *Error
		httpErr *httpError
	)
	switch {
	case errors.As(err, &own):
		return kindStatus(own.Kind), own.Message, true
	case errors.As(err, &httpErr):
		return httpErr.status, httpErr.message, true
	}
	return transport.ErrorStatus(err)
}

// fail answers with the status and message for err, logging the
// unexpected ones.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	status, msg, known := errorStatus(err)
	if !known {
		h.log.Error("v2 inference", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
	}
	transport.SetRetryAfter(w.Header(), err)
	WriteError(w, status, msg)
}

// outcomeOf classifies an inference's end for the run observer: the
// refusals of the protocol and of HTTP (4xx) are bad requests, core's
// errors say what they are.
func outcomeOf(err error) core.Outcome {
	if err == nil {
		return core.OutcomeSuccess
	}
	var (
		own     *Error
		httpErr *httpError
		je      *tensorjson.Error
	)
	if (errors.As(err, &own) && own.Kind != KindUnavailable) || (errors.As(err, &httpErr) && httpErr.status < 500) || errors.As(err, &je) {
		return core.OutcomeBadRequest
	}
	return core.OutcomeOf(err)
}
