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
