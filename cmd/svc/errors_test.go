package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	sequential(t)
	classifier := startServer(t, model("classifier.onnx"))
	multi := startServer(t, model("multi_input.onnx"))
	alltypes := startServer(t, model("alltypes.onnx"))
	fixed := startServer(t, model("fixed_shape.onnx"))
	failing := startServer(t, model("failing.onnx"))
	scalar := startServer(t, model("scalar.onnx"))

	tests := []struct {
		name        string
		srv         *server
		method      string
		path        string
		contentType string
		body        string
		status      int
		detail      string // exact, or a prefix when it ends in "..."
	}{
		{"missing input", classifier, "POST", "/predict", "application/json", `{}`, 400, "Missing required input: 'input'"},
		{"missing one of several", multi, "POST", "/predict", "application/json", `{"features": [[1,2,3]], "ids": [[1,2]], "mask": [[true,false]]}`, 400, "Missing required input: 'text'"},
		{"string for array", classifier, "POST", "/predict", "application/json", `{"input": "hello"}`, 400, "Invalid input type for 'input': expected array"},
		{"object for array", classifier, "POST", "/predict", "application/json", `{"input": {"a": 1}}`, 400, "Invalid input type for 'input': expected array"},
		{"malformed json", classifier, "POST", "/predict", "application/json", `{"input": [1, 2,`, 400, "Invalid JSON body: ..."},
		{"empty body", classifier, "POST", "/predict", "application/json", ``, 400, "Invalid JSON body: ..."},
		{"body not an object", classifier, "POST", "/predict", "application/json", `[1, 2, 3]`, 400, "Request body must be a JSON object mapping input names to values"},
		{"unknown input", classifier, "POST", "/predict", "application/json", `{"input": [[1,2,3,4]], "extra": 1}`, 400, "Unknown input 'extra'; the model's inputs are: 'input'"},
		{"ragged", classifier, "POST", "/predict", "application/json", `{"input": [[1,2,3,4],[1,2,3]]}`, 400, "Invalid input for 'input': ragged array..."},
		{"wrong fixed dim", classifier, "POST", "/predict", "application/json", `{"input": [[1,2,3]]}`, 400, "Invalid shape for 'input': expected [-1, 4], got [1, 3]"},
		{"wrong rank", classifier, "POST", "/predict", "application/json", `{"input": [[[1,2,3,4]]]}`, 400, "Invalid shape for 'input': expected rank 2 [-1, 4], got rank 3 [1, 1, 4]"},
		{"fixed shape mismatch", fixed, "POST", "/predict", "application/json", `{"image": [[[[1]]]]}`, 400, "Invalid shape for 'image': expected [1, 3, 4, 4], got [1, 1, 1, 1]"},
		{"fraction for int", multi, "POST", "/predict", "application/json", `{"features": [[1,2,3]], "ids": [[1,2.5]], "mask": [[true,false]], "text": ["a"]}`, 400, "Invalid value for 'ids' at [0, 1]: 2.5 is not an integer (int64)"},
		{"out of range uint8", alltypes, "POST", "/predict", "application/json", `{"f64":[1],"i8":[1],"i16":[1],"i32":[1],"u8":[300],"u16":[1],"u32":[1],"u64":[1]}`, 400, "Invalid value for 'u8' at [0]: 300 is out of range for uint8"},
		{"negative uint32", alltypes, "POST", "/predict", "application/json", `{"f64":[1],"i8":[1],"i16":[1],"i32":[1],"u8":[1],"u16":[1],"u32":[-1],"u64":[1]}`, 400, "Invalid value for 'u32' at [0]: -1 is out of range for uint32"},
		{"number for bool", multi, "POST", "/predict", "application/json", `{"features": [[1,2,3]], "ids": [[1,2]], "mask": [[1,0]], "text": ["a"]}`, 400, "Invalid value for 'mask' at [0, 0]: expected a boolean, got a number"},
		{"array for scalar", scalar, "POST", "/predict", "application/json", `{"x": [1], "scale": [2]}`, 400, "Invalid input type for 'x': expected number"},
		{"inference failure", failing, "POST", "/predict", "application/json", `{"x": [1, 2, 3, 4]}`, 500, "Inference failed: ..."},
		{"unknown path", classifier, "GET", "/nope", "", "", 404, "Not Found"},
		{"unknown path post", classifier, "POST", "/v1/predict", "application/json", `{}`, 404, "Not Found"},
		{"wrong method on predict", classifier, "GET", "/predict", "", "", 405, "Method Not Allowed"},
		{"wrong method on health", classifier, "POST", "/health", "application/json", `{}`, 405, "Method Not Allowed"},
		{"text content type", classifier, "POST", "/predict", "text/plain", `{"input": [[1,2,3,4]]}`, 415, "Unsupported Content-Type 'text/plain': send the body as application/json"},
		{"form content type", classifier, "POST", "/predict", "application/x-www-form-urlencoded", `input=1`, 415, "Unsupported Content-Type 'application/x-www-form-urlencoded': send the body as application/json"},
		{"no content type", classifier, "POST", "/predict", "", `{"input": [[1,2,3,4]]}`, 415, "Missing Content-Type: send the body as application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.srv.do(tt.method, tt.path, tt.contentType, strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, tt.status, r.Body)
			}
			got := r.Detail(t)
			if prefix, ok := strings.CutSuffix(tt.detail, "..."); ok {
				if !strings.HasPrefix(got, prefix) || len(got) <= len(prefix) {
					t.Fatalf("detail = %q, want prefix %q", got, prefix)
				}
			} else if got != tt.detail {
				t.Fatalf("detail = %q, want %q", got, tt.detail)
			}
			if tt.status == 405 && r.Header.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}

	// The server keeps serving after every error above.
	for _, s := range []*server{classifier, failing} {
		if r := s.get("/health"); r.Status != 200 {
			t.Fatalf("health after errors = %d", r.Status)
		}
	}
	if r := failing.predict(`{"x": [1, 2, 3, 4, 5, 6]}`); r.Status != 200 {
		t.Fatalf("failing model with a valid input = %d %s", r.Status, r.Body)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "svc.yml")
	if err := os.WriteFile(cfg, []byte("limits:\n  max_body_size: 1KiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("classifier.onnx"), "--config", cfg)
	small := `{"input": [[1, 2, 3, 4]]}`
	if r := s.predict(small); r.Status != 200 {
		t.Fatalf("small body = %d %s", r.Status, r.Body)
	}
	big := `{"input": [` + strings.Repeat("[1.0, 2.0, 3.0, 4.0],", 100) + `[1, 2, 3, 4]]}`
	r := s.predict(big)
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body = %d %s", r.Status, r.Body)
	}
	if d := r.Detail(t); d != "Request body too large: the limit is 1 KiB" {
		t.Fatalf("detail = %q", d)
	}
	// Chunked bodies (no Content-Length) are limited too.
	r = s.do(http.MethodPost, "/predict", "application/json", struct{ *strings.Reader }{strings.NewReader(big)})
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked big body = %d %s", r.Status, r.Body)
	}
	if r := s.predict(small); r.Status != 200 {
		t.Fatalf("small body after 413 = %d", r.Status)
	}
}
