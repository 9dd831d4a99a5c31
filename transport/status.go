package transport

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// ErrorStatus maps an error of the JSON codec or of core to the HTTP status
// and message every HTTP protocol answers with: the one place core's error
// kinds meet HTTP. known is false for an unexpected error (500, "Inference
// failed: ..."), which the caller logs. A protocol checks its own refusals
// first.
func ErrorStatus(err error) (status int, msg string, known bool) {
	var (
		client   *tensorjson.Error
		input    *core.InputError
		timeout  *core.TimeoutError
		infer    *core.InferenceError
		notReady *core.NotReadyError
		limit    *core.LimitError
		busy     *core.BusyError
	)
	switch {
	case errors.As(err, &client):
		return http.StatusBadRequest, client.Message, true
	case errors.As(err, &input):
		return http.StatusBadRequest, input.Message, true
	case errors.As(err, &limit):
		return http.StatusRequestEntityTooLarge, limit.Message, true
	case errors.As(err, &busy):
		return http.StatusServiceUnavailable, busy.Message, true
	case errors.As(err, &notReady):
		return http.StatusServiceUnavailable, notReady.Error(), true
	case errors.As(err, &timeout):
		return http.StatusGatewayTimeout, timeout.Error(), true
	case errors.As(err, &infer):
		return http.StatusInternalServerError, infer.Error(), true
	case errors.Is(err, core.ErrCanceled):
		// The client went away or the server is stopping; 503 if anyone
		// is still listening.
		return http.StatusServiceUnavailable, "Request canceled before inference finished", true
	}
	return http.StatusInternalServerError, "Inference failed: " + err.Error(), false
}

// SetRetryAfter sets the Retry-After header of an answer to err when err
// says when to come back (*core.BusyError).
func SetRetryAfter(h http.Header, err error) {
	var busy *core.BusyError
	if errors.As(err, &busy) {
		h.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(busy.RetryAfter.Seconds())), 1)))
	}
}
