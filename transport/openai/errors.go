package openai

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

// apiError is an error in OpenAI's shape, with its status: {"error":
// {"message", "type", "param", "code"}}; type is invalid_request_error
// for a 4xx, server_error for a 5xx.
type apiError struct {
	Status  int
	Message string
	// Param names the request's field at fault ("": null); Code is
	// OpenAI's code ("": null): model_not_found, context_length_exceeded,
	// request_too_large.
	Param, Code string
	// unexpected: the server failed, which is logged.
	unexpected bool
}

func (e *apiError) Error() string { return e.Message }

// invalid is a 400 of the request's field param.
func invalid(param, format string, a ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Param: param, Message: fmt.Sprintf(format, a...)}
}

func modelNotFound(name string) *apiError {
	return &apiError{Status: http.StatusNotFound, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("The model '%s' does not exist: this server serves one model (GET %s lists it)", transport.Quote(name), PathModels)}
}

// fromCore is err in OpenAI's shape: an *apiError as it is, else svc's
// status and message for core's error kinds (transport.ErrorStatus).
func fromCore(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	status, msg, known := transport.ErrorStatus(err)
	out := &apiError{Status: status, Message: msg, Code: codeOf(status), unexpected: !known}
	var input *core.InputError
	if errors.As(err, &input) {
		out.Param = input.Input
	}
	var limit *core.LimitError
	if errors.As(err, &limit) {
		out.Param = limit.Key
	}
	return out
}

// codeOf is OpenAI's code for a status svc answers ("": none).
func codeOf(status int) string {
	if status == http.StatusRequestEntityTooLarge {
		return "request_too_large"
	}
	return ""
}

func writeErr(w http.ResponseWriter, e *apiError) {
	typ := "invalid_request_error"
	if e.Status >= 500 {
		typ = "server_error"
	}
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	writeJSON(w, e.Status, struct {
		Error body `json:"error"`
	}{body{e.Message, typ, null(e.Param), null(e.Code)}})
}
