package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

func TestErrorStatus(t *testing.T) {
	tests := []struct {
		give   error
		status int
		msg    string
		known  bool
	}{
		{&tensorjson.Error{Message: "Invalid input type for 'x': expected array"}, http.StatusBadRequest, "Invalid input type for 'x': expected array", true},
		{fmt.Errorf("decode: %w", &core.InputError{Input: "x", Message: "Empty batch for 'x': send at least one item"}), http.StatusBadRequest, "Empty batch for 'x': send at least one item", true},
		{&core.NotReadyError{Model: "m", State: core.StateLoading}, http.StatusServiceUnavailable, "Model 'm' is loading; try again shortly", true},
		{&core.TimeoutError{After: 2 * time.Second}, http.StatusGatewayTimeout, "Inference timed out after 2s", true},
		{&core.InferenceError{Err: errors.New("bad shape")}, http.StatusInternalServerError, "Inference failed: bad shape", true},
		{fmt.Errorf("%w: %w", core.ErrCanceled, context.Canceled), http.StatusServiceUnavailable, "Request canceled before inference finished", true},
		{errors.New("surprise"), http.StatusInternalServerError, "Inference failed: surprise", false},
	}
	for _, tt := range tests {
		status, msg, known := transport.ErrorStatus(tt.give)
		if status != tt.status || msg != tt.msg || known != tt.known {
			t.Errorf("ErrorStatus(%v) = %d, %q, %v; want %d, %q, %v", tt.give, status, msg, known, tt.status, tt.msg, tt.known)
		}
	}
}
