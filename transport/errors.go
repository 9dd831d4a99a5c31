package transport

import (
	"encoding/json"
	"net/http"
)

// writeError writes the service's error body {"detail": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(struct {
		Detail string `json:"detail"`
	}{msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeJSON writes a 200 with a pre-encoded JSON body.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
