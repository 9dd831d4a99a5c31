package oip

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// Error is a request the protocol refuses: its HTTP status and the message
// of the {"error"} body.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
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

// errorStatus maps an error of this package, of the JSON codec or of core
// to its status and message: the one place they meet HTTP here. known is
// false for an unexpected error, which the caller logs.
func errorStatus(err error) (status int, msg string, known bool) {
	var (
		own      *Error
		client   *tensorjson.Error
		input    *core.InputError
		timeout  *core.TimeoutError
		infer    *core.InferenceError
		notReady *core.NotReadyError
	)
	switch {
	case errors.As(err, &own):
		return own.Status, own.Message, true
	case errors.As(err, &client):
		return http.StatusBadRequest, client.Message, true
	case errors.As(err, &input):
		return http.StatusBadRequest, input.Message, true
	case errors.As(err, &notReady):
		return http.StatusServiceUnavailable, notReady.Error(), true
	case errors.As(err, &timeout):
		return http.StatusGatewayTimeout, timeout.Error(), true
	case errors.As(err, &infer):
		return http.StatusInternalServerError, infer.Error(), true
	case errors.Is(err, core.ErrCanceled):
		return http.StatusServiceUnavailable, "Request canceled before inference finished", true
	}
	return http.StatusInternalServerError, "Inference failed: " + err.Error(), false
}

// elementCount is tensorjson.ElementCount as this package's error.
func elementCount(name string, shape []int64) (int64, error) {
	n, err := tensorjson.ElementCount(name, shape)
	if err != nil {
		return 0, badRequest("%s", err.Message)
	}
	return n, nil
}
