// Package transport is svc's shared serving plumbing: named listeners, the
// HTTP server's lifecycle, composable middleware (request id, recovery,
// access log), the route group every HTTP frontend adds to, and the start-up
// banner. The protocols themselves live in one package each below it
// (transport/rest for the v1 JSON API); none of them imports another.
package transport

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"
	"go.uber.org/fx"
)

// Route is one HTTP endpoint contributed by a frontend.
type Route struct {
	// Methods the route answers; HEAD is added for GET routes.
	Methods []string
	// Path is a gorilla/mux path template, such as /v2/models/{name}.
	Path string
	// Purpose is the banner's description; routes without one are not
	// listed (assets, aliases).
	Purpose string
	// Order sorts the banner's table (lower first), then the path.
	Order int
	// Handler serves the route.
	Handler http.Handler
	// Prefix makes Path match every path below it too.
	Prefix bool
	// Errors, when set, writes the router's 404 and 405 answers for every
	// path in the route's first segment (/v2 and below for /v2/models/…),
	// so that a protocol answers them in its own error form.
	Errors ErrorWriter
}

// RouteGroup is the fx value group of []Route that HTTP frontends provide.
const RouteGroup = `group:"routes,flatten"`

// AsRoutes annotates a constructor returning []Route so that its routes join
// the group.
func AsRoutes(ctor any) any {
	return fx.Annotate(ctor, fx.ResultTags(RouteGroup))
}

// ErrorWriter writes an error response in a frontend's format. The router
// uses the one the main frontend supplies for unknown paths, wrong methods
// and handler panics.
type ErrorWriter func(w http.ResponseWriter, status int, msg string)

// PlainErrors writes msg as text/plain: the fallback when no frontend
// supplies an ErrorWriter.
func PlainErrors(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// Endpoint is one row of the banner's endpoint table.
type Endpoint struct{ Method, Path, Purpose string }

// Endpoints lists the routes that have a purpose, in banner order, one row
// per route (its first method).
func Endpoints(routes []Route) []Endpoint {
	rs := slices.Clone(routes)
	slices.SortStableFunc(rs, func(a, b Route) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Path, b.Path)
	})
	var out []Endpoint
	for _, r := range rs {
		if r.Purpose == "" || len(r.Methods) == 0 {
			continue
		}
		out = append(out, Endpoint{Method: r.Methods[0], Path: r.Path, Purpose: r.Purpose})
	}
	return out
}

// Router is gorilla/mux's router with a cheaper dispatch: mux's own
// ServeHTTP copies every request twice (one Request.WithContext for the
// path variables, one for the matched route), about 700 bytes of garbage a
// request, the most of any one step of a small /predict. Router matches
// with mux (Match: the routes, methods and middleware as mux has them, and
// the 404 and 405 handlers NewRouter sets for requests no route takes) and
// hands the request on as it is, or with its path variables (mux.Vars)
// when the route has some; mux.CurrentRoute is not set.
type Router struct{ mux *mux.Router }

// ServeHTTP serves req with the handler of the route it matches.
func (r Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var m mux.RouteMatch
	if !r.mux.Match(req, &m) || m.Handler == nil {
		// Not with the handlers NewRouter sets; mux's answer otherwise.
		r.mux.ServeHTTP(w, req)
		return
	}
	if len(m.Vars) > 0 {
		req = mux.SetURLVars(req, m.Vars)
	}
	m.Handler.ServeHTTP(w, req)
}

// NewRouter builds the router for routes. Requests no route matches get
// 404 "Not Found", or 405 "Method Not Allowed" with an Allow header, written
// by errs.
func NewRouter(routes []Route, errs ErrorWriter) Router {
	if errs == nil {
		errs = PlainErrors
	}
	// No path cleaning: mux would answer "//predict" or "/a/../predict"
	// with an empty 301 to the clean path, which a client follows with a
	// GET that drops the body; an unclean path is not a route (404).
	r := mux.NewRouter().SkipClean(true)
	for _, rt := range routes {
		methods := rt.Methods
		if slices.Contains(methods, http.MethodGet) && !slices.Contains(methods, http.MethodHead) {
			methods = append(slices.Clone(methods), http.MethodHead)
		}
		var m *mux.Route
		if rt.Prefix {
			m = r.PathPrefix(rt.Path)
		} else {
			m = r.Path(rt.Path)
		}
		m.Handler(rt.Handler).Methods(methods...)
	}
	scoped := map[string]ErrorWriter{}
	for _, rt := range routes {
		if rt.Errors != nil {
			scoped[firstSegment(rt.Path)] = rt.Errors
		}
	}
	writer := func(req *http.Request) ErrorWriter {
		if w, ok := scoped[firstSegment(req.URL.Path)]; ok {
			return w
		}
		return errs
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writer(req)(w, http.StatusNotFound, "Not Found")
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if allowed := allowedMethods(r, req); allowed != "" {
			w.Header().Set("Allow", allowed)
		}
		writer(req)(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	})
	return Router{mux: r}
}

// firstSegment is a path's first segment: "/v2" for /v2 and /v2/models/x.
func firstSegment(path string) string {
	if i := strings.IndexByte(path[min(1, len(path)):], '/'); i >= 0 {
		return path[:i+1]
	}
	return path
}

// allowedMethods lists the methods registered for the request's path.
func allowedMethods(r *mux.Router, req *http.Request) string {
	var methods []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		probe := req.Clone(req.Context())
		probe.Method = m
		var match mux.RouteMatch
		if r.Match(probe, &match) && match.MatchErr == nil {
			methods = append(methods, m)
		}
	}
	return strings.Join(methods, ", ")
}

// MetricsJSON serves the JSON record of GET /metrics. The v1 frontend
// supplies it; the route itself belongs to transport/metrics, which answers
// Prometheus scrapes with the exposition and every other request with this
// handler, so that one route has one owner and neither package imports the
// other.
type MetricsJSON http.Handler
