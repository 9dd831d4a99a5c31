package rest

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// WriteError writes the v1 error body {"detail": msg}. It is the
// transport.ErrorWriter of the server, so unknown paths, wrong methods and
// panics answer in the same form.
func WriteError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(struct {
		Detail string `json:"detail"`
	}{msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorStatus maps an error from decoding or from core to the status and
// detail of the v1 API: the one place core's error kinds meet HTTP here.
// ok is false for an unexpected error, which the caller logs.
func errorStatus(err error) (status int, detail string, ok bool) {
	var (
		client   *tensorjson.Error
		input    *core.InputError
		timeout  *core.TimeoutError
		infer    *core.InferenceError
		notReady *core.NotReadyError
	)
	switch {
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
		// The client went away or the server is stopping; 503 if anyone
		// is still listening.
		return http.StatusServiceUnavailable, "Request canceled before inference finished", true
	}
	return http.StatusInternalServerError, "Inference failed: " + err.Error(), false
}
