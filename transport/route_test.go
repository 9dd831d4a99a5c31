package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
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

// TestRouterDispatch: a matched request reaches its handler as it came
// (no copy) when the route has no variables, and with mux.Vars when it
// has; the router's own answers stay mux's.
func TestRouterDispatch(t *testing.T) {
	var got *http.Request
	var vars map[string]string
	h := NewRouter([]Route{
		{Methods: []string{http.MethodPost}, Path: "/predict", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, vars = r, mux.Vars(r)
		})},
		{Methods: []string{http.MethodGet}, Path: "/v2/models/{name}/versions/{version}", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, vars = r, mux.Vars(r)
		})},
	}, PlainErrors)

	req := httptest.NewRequest(http.MethodPost, "http://svc/predict", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got != req || len(vars) != 0 {
		t.Errorf("/predict: handler got %p (sent %p), vars %v", got, req, vars)
	}

	got, vars = nil, nil
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "http://svc/v2/models/m/versions/3", nil))
	if got == nil || vars["name"] != "m" || vars["version"] != "3" || len(vars) != 2 {
		t.Errorf("vars route: handler called %v, vars %v", got != nil, vars)
	}

	got = nil
	for _, tc := range []struct {
		method, path string
		want         int
		allow        string
	}{
		{http.MethodGet, "/predict", http.StatusMethodNotAllowed, "POST"},
		{http.MethodHead, "/v2/models/m/versions/3", http.StatusOK, ""},
		{http.MethodPost, "/v2/models/m/versions/3", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodGet, "/nope", http.StatusNotFound, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, "http://svc"+tc.path, nil))
		if w.Code != tc.want || w.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q", tc.method, tc.path, w.Code, w.Header().Get("Allow"), tc.want, tc.allow)
		}
	}
}

// BenchmarkRouter: the allocations of dispatching a request to a route
// without variables and to one with.
func BenchmarkRouter(b *testing.B) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h := NewRouter([]Route{
		{Methods: []string{http.MethodPost}, Path: "/predict", Handler: ok},
		{Methods: []string{http.MethodPost}, Path: "/v2/models/{name}/infer", Handler: ok},
	}, PlainErrors)
	for _, path := range []string{"/predict", "/v2/models/m/infer"} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "http://svc"+path, nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}
