package openapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"

	"github.com/svc-dev/svc/openapi"
)

// fakeAssets stands in for the vendor files.
func fakeAssets() fstest.MapFS {
	return fstest.MapFS{
		"swagger-ui-bundle.js":             {Data: []byte("window.SwaggerUIBundle = function () {};" + strings.Repeat("/* pad */", 400))},
		"swagger-ui.css":                   {Data: []byte("body { margin: 0 }")},
		"swagger-ui-LICENSE":               {Data: []byte("Apache License")},
		"swagger-ui-NOTICE":                {Data: []byte("swagger-ui")},
		"swagger-ui-bundle.js.LICENSE.txt": {Data: []byte("licences")},
		"redoc.standalone.js":              {Data: []byte(`window.Redoc = {init: function () {}}; var logo = {src:"https://cdn.redoc.ly/redoc/logo-mini.svg"};`)},
		"redoc-LICENSE":                    {Data: []byte("MIT")},
		"redoc.standalone.js.LICENSE.txt":  {Data: []byte("licences")},
	}
}

func newDocsServer(t *testing.T, assets fs.FS) (*httptest.Server, *openapi3.T) {
	t.Helper()
	doc := buildDoc(t, "classifier")
	docs, err := openapi.NewDocs(doc, openapi.WithAssets(assets))
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	docs.Register(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, doc
}

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// A plain transport: no transparent gzip, so encoding can be checked.
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var (
	absoluteURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`)
	linkAttr    = regexp.MustCompile(`(?:src|href)="([^"]*)"`)
)

func TestDocsPages(t *testing.T) {
	srv, _ := newDocsServer(t, fakeAssets())
	tests := []struct {
		path   string
		script string
		csp    []string
	}{
		{"/docs", "swagger-ui-bundle.js", []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"}},
		{"/redoc", "redoc.standalone.js", []string{"default-src 'none'", "script-src 'self'", "worker-src 'self' blob:"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range tt.csp {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "http") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
				t.Errorf("CSP %q allows another origin or eval", csp)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			html := string(body)
			if m := absoluteURL.FindString(html); m != "" {
				t.Errorf("page holds an absolute URL %q:\n%s", m, html)
			}
			if strings.Contains(html, "<script>") || strings.Contains(html, "fonts.") {
				t.Errorf("page has an inline script or a font link:\n%s", html)
			}
			if !strings.Contains(html, "<title>classifier - ") {
				t.Errorf("page title does not name the model:\n%s", html)
			}
			// Every link resolves, from the page's URL, to something this
			// server serves with the right type.
			links := linkAttr.FindAllStringSubmatch(html, -1)
			sawScript := false
			for _, l := range links {
				ref := l[1]
				if strings.HasPrefix(ref, "data:") {
					continue
				}
				base, _ := url.Parse(srv.URL + tt.path)
				u, err := base.Parse(ref)
				if err != nil {
					t.Fatal(err)
				}
				if u.Host != base.Host {
					t.Errorf("link %q leaves the server", ref)
					continue
				}
				r, b := get(t, u.String())
				if r.StatusCode != http.StatusOK || len(b) == 0 {
					t.Errorf("link %q: status %d", ref, r.StatusCode)
				}
				if strings.Contains(u.Path, tt.script) {
					sawScript = true
				}
				wantType := map[bool]string{true: "text/javascript; charset=utf-8", false: "text/css; charset=utf-8"}[strings.HasSuffix(u.Path, ".js")]
				if ct := r.Header.Get("Content-Type"); ct != wantType {
					t.Errorf("link %q: Content-Type %q, want %q", ref, ct, wantType)
				}
			}
			if !sawScript {
				t.Errorf("page does not load %s:\n%s", tt.script, html)
			}
		})
	}
}

// TestRedocLogoReplaced checks that the served ReDoc bundle does not load
// its logo from Redocly's CDN.
func TestRedocLogoReplaced(t *testing.T) {
	srv, _ := newDocsServer(t, fakeAssets())
	_, js := get(t, srv.URL+"/docs/assets/redoc.standalone.js")
	if bytes.Contains(js, []byte("cdn.redoc.ly")) {
		t.Errorf("served bundle still loads from cdn.redoc.ly: %s", js)
	}
	if !bytes.Contains(js, []byte(`src:"data:image/gif;base64,`)) {
		t.Errorf("logo not replaced by an inline image: %s", js)
	}
}

// TestDocsInitScripts checks that both pages point their UI at the document,
// with a relative URL, and that Swagger UI's online validator is off.
func TestDocsInitScripts(t *testing.T) {
	srv, _ := newDocsServer(t, fakeAssets())
	_, swagger := get(t, srv.URL+"/docs/assets/swagger-init.js")
	for _, want := range []string{`url: "openapi.json"`, "validatorUrl: null", `supportedSubmitMethods: ["get", "post"]`} {
		if !strings.Contains(string(swagger), want) {
			t.Errorf("swagger-init.js lacks %s:\n%s", want, swagger)
		}
	}
	_, redoc := get(t, srv.URL+"/docs/assets/redoc-init.js")
	if !strings.Contains(string(redoc), `Redoc.init("openapi.json"`) {
		t.Errorf("redoc-init.js does not load openapi.json:\n%s", redoc)
	}
	for _, body := range [][]byte{swagger, redoc} {
		if m := absoluteURL.FindString(string(body)); m != "" {
			t.Errorf("init script holds an absolute URL %q", m)
		}
	}
}

func TestDocsWithoutAssets(t *testing.T) {
	for name, assets := range map[string]fs.FS{"empty": fstest.MapFS{}, "nil": nil,
		"swagger only": fstest.MapFS{"redoc-LICENSE": {Data: []byte("MIT")}}} {
		t.Run(name, func(t *testing.T) {
			srv, doc := newDocsServer(t, assets)
			for _, path := range []string{"/docs", "/redoc"} {
				resp, body := get(t, srv.URL+path)
				if resp.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("%s: status %d, want 503", path, resp.StatusCode)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q", path, ct)
				}
				want := `{"detail":"Documentation assets are not bundled in this build; run 'make assets' and rebuild"}`
				if string(body) != want {
					t.Errorf("%s: body %s, want %s", path, body, want)
				}
			}
			// The document itself is still served.
			checkSpec(t, srv.URL, doc)
			resp, _ := get(t, srv.URL+"/docs/assets/swagger-ui-bundle.js")
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("missing asset: status %d, want 404", resp.StatusCode)
			}
		})
	}
}

func TestDocsPartialAssets(t *testing.T) {
	assets := fakeAssets()
	delete(assets, "redoc.standalone.js")
	srv, _ := newDocsServer(t, assets)
	if resp, _ := get(t, srv.URL+"/docs"); resp.StatusCode != http.StatusOK {
		t.Errorf("/docs: status %d, want 200", resp.StatusCode)
	}
	if resp, _ := get(t, srv.URL+"/redoc"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/redoc: status %d, want 503", resp.StatusCode)
	}
}

func checkSpec(t *testing.T, base string, doc *openapi3.T) {
	t.Helper()
	resp, body := get(t, base+"/openapi.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/openapi.json: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("/openapi.json: Content-Type %q", ct)
	}
	want, err := openapi.MarshalDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Error("/openapi.json differs from the document")
	}
	loaded, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		t.Errorf("served document is invalid: %v", err)
	}
}

func TestDocsSpec(t *testing.T) {
	srv, doc := newDocsServer(t, fakeAssets())
	checkSpec(t, srv.URL, doc)
}

func TestDocsAssetCaching(t *testing.T) {
	srv, _ := newDocsServer(t, fakeAssets())
	_, page := get(t, srv.URL+"/docs")
	m := regexp.MustCompile(`src="(docs/assets/swagger-ui-bundle\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("no versioned bundle URL in\n%s", page)
	}
	versioned := srv.URL + "/" + m[1]
	original := fakeAssets()["swagger-ui-bundle.js"].Data

	resp, body := get(t, versioned)
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("versioned URL: Cache-Control %q", cc)
	}
	if !bytes.Equal(body, original) {
		t.Error("asset body differs from the file")
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r, _ := get(t, versioned, "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", r.StatusCode)
	}
	if r, _ := get(t, srv.URL+"/docs/assets/swagger-ui-bundle.js"); r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("unversioned URL: Cache-Control %q, want no-cache", r.Header.Get("Cache-Control"))
	}
	if r, _ := get(t, srv.URL+"/docs/assets/swagger-ui-bundle.js?v=stale"); r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("stale version: Cache-Control %q, want no-cache", r.Header.Get("Cache-Control"))
	}

	// gzip on request, same bytes once inflated, and a different ETag.
	resp, body = get(t, versioned, "Accept-Encoding", "gzip, deflate")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", resp.Header)
	}
	if resp.Header.Get("ETag") == etag {
		t.Error("gzip and identity share an ETag")
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	inflated, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(inflated, original) {
		t.Errorf("gzip body does not inflate to the file (err %v)", err)
	}
	if r, _ := get(t, versioned, "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent although refused with q=0")
	}
	if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
		t.Error("no Vary: Accept-Encoding")
	}
}

func TestDocsUnknownAssetAndMethods(t *testing.T) {
	srv, _ := newDocsServer(t, fakeAssets())
	resp, body := get(t, srv.URL+"/docs/assets/nope.js")
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("unknown asset: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var detail map[string]string
	if err := json.Unmarshal(body, &detail); err != nil || detail["detail"] == "" {
		t.Errorf("unknown asset body %s", body)
	}
	// The licences are served next to the code they cover.
	if r, b := get(t, srv.URL+"/docs/assets/redoc-LICENSE"); r.StatusCode != http.StatusOK ||
		r.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(b) != "MIT" {
		t.Errorf("licence: %d %q %q", r.StatusCode, r.Header.Get("Content-Type"), b)
	}
	// HEAD is answered; other methods are not routed (the server answers 405).
	req, _ := http.NewRequest(http.MethodHead, srv.URL+"/openapi.json", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("HEAD /openapi.json: %d", r.StatusCode)
	}
	r, err = http.Post(srv.URL+"/docs", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /docs: %d, want 405", r.StatusCode)
	}
}

// TestBundledAssets checks the assets embedded in this build: a release
// binary must serve both pages. Run `make assets` (build/docs-assets.sh)
// before testing.
func TestBundledAssets(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs the documentation assets (make assets); the full suite (make test) runs it")
	}
	assets := openapi.BundledAssets()
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "swagger-ui-LICENSE", "redoc-LICENSE"} {
		if _, err := fs.Stat(assets, name); err != nil {
			t.Fatalf("documentation asset %s is not embedded (%v): run build/docs-assets.sh (make assets) before building or testing", name, err)
		}
	}
	doc := buildDoc(t, "classifier")
	docs, err := openapi.NewDocs(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !docs.AssetsBundled() {
		t.Fatal("NewDocs with the embedded assets cannot serve both pages")
	}
	js, _ := fs.ReadFile(assets, "swagger-ui-bundle.js")
	if !bytes.Contains(js, []byte("SwaggerUIBundle")) {
		t.Error("swagger-ui-bundle.js does not define SwaggerUIBundle")
	}
	js, _ = fs.ReadFile(assets, "redoc.standalone.js")
	if !bytes.Contains(js, []byte("Redoc")) || bytes.Contains(js, []byte("fonts.googleapis.com")) {
		t.Error("redoc.standalone.js does not define Redoc, or loads web fonts")
	}
	// The logo substitution still matches the pinned bundle.
	if !bytes.Contains(js, []byte("https://cdn.redoc.ly/redoc/logo-mini.svg")) {
		t.Error("the pinned ReDoc bundle no longer holds the logo URL that NewDocs replaces; review the substitution")
	}
	r := mux.NewRouter()
	docs.Register(r)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs/assets/redoc.standalone.js", nil))
	if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte("cdn.redoc.ly")) {
		t.Errorf("served ReDoc bundle: status %d, still refers to cdn.redoc.ly: %v", rec.Code, bytes.Contains(rec.Body.Bytes(), []byte("cdn.redoc.ly")))
	}
}
