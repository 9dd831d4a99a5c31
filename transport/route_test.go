package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRouterUncleanPaths: a path that is not in canonical form is no route
// (404 from the error writer), never a redirect without a body.
func TestRouterUncleanPaths(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h := NewRouter([]Route{{Methods: []string{http.MethodPost}, Path: "/predict", Handler: ok}}, PlainErrors)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "/predict", http.StatusOK},
		{http.MethodPost, "//predict", http.StatusNotFound},
		{http.MethodPost, "/./predict", http.StatusNotFound},
		{http.MethodPost, "/x/../predict", http.StatusNotFound},
		{http.MethodGet, "//predict", http.StatusNotFound},
		{http.MethodGet, "/predict", http.StatusMethodNotAllowed},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, "http://svc"+tc.path, nil))
		if w.Code != tc.want {
			t.Errorf("%s %s: %d %q, want %d", tc.method, tc.path, w.Code, w.Body.String(), tc.want)
		}
		if w.Code != http.StatusOK && w.Body.Len() == 0 {
			t.Errorf("%s %s: %d with an empty body", tc.method, tc.path, w.Code)
		}
	}
}

// TestRouterScopedErrors: a route's own error writer answers the router's
// 404 and 405 in its first path segment; the main one answers elsewhere.
func TestRouterScopedErrors(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	v2 := func(w http.ResponseWriter, status int, msg string) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte("v2: " + msg))
	}
	main := func(w http.ResponseWriter, status int, msg string) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte("main: " + msg))
	}
	h := NewRouter([]Route{
		{Methods: []string{http.MethodPost}, Path: "/predict", Handler: ok},
		{Methods: []string{http.MethodPost}, Path: "/v2/models/{name}/infer", Handler: ok, Errors: v2},
	}, main)
	for _, tc := range []struct {
		method, path string
		want         string
	}{
		{http.MethodGet, "/v2/models/m/infer", "v2: Method Not Allowed"},
		{http.MethodPost, "/v2/models/m/other", "v2: Not Found"},
		{http.MethodPost, "/v2", "v2: Not Found"},
		{http.MethodPost, "/v2/", "v2: Not Found"},
		{http.MethodPost, "/v2x", "main: Not Found"},
		{http.MethodGet, "/predict", "main: Method Not Allowed"},
		{http.MethodPost, "/", "main: Not Found"},
		{http.MethodPost, "//v2/models/m/infer", "main: Not Found"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, "http://svc"+tc.path, nil))
		if w.Body.String() != tc.want {
			t.Errorf("%s %s: %d %q, want %q", tc.method, tc.path, w.Code, w.Body.String(), tc.want)
		}
	}
}
