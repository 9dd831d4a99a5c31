package rest

import (
	"encoding/json"
	"net/http"
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
