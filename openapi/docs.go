package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"

	"github.com/svc-dev/svc/transport"
)

// PathAssets is the prefix under which the page assets are served.
const PathAssets = "/docs/assets/"

// MsgDocsUnavailable is the detail of the 503 answered by /docs and /redoc
// when the binary was built without the documentation assets.
const MsgDocsUnavailable = "Documentation assets are not bundled in this build; run 'make assets' and rebuild"

// The vendor files the pages need, as build/docs-assets.sh names them.
const (
	fileSwaggerJS  = "swagger-ui-bundle.js"
	fileSwaggerCSS = "swagger-ui.css"
	fileRedocJS    = "redoc.standalone.js"
	fileSwaggerRun = "swagger-init.js"
	fileRedocRun   = "redoc-init.js"
)

// vendorFiles lists every file taken from the npm packages, licences
// included, so that they are served next to the code they cover.
var vendorFiles = []string{
	fileSwaggerJS, fileSwaggerCSS, "swagger-ui-LICENSE", "swagger-ui-NOTICE", "swagger-ui-bundle.js.LICENSE.txt",
	fileRedocJS, "redoc-LICENSE", "redoc.standalone.js.LICENSE.txt",
}

// ReDoc 2.5.4 always renders the Redocly logo in the sidebar footer from
// its CDN (no option turns it off). The CSP would block the request, but the
// browser still tries it and logs a violation, so the served bundle points
// that one image at a blank inline GIF instead. The file on disk keeps its
// pinned hash; the substitution happens in memory.
const (
	redocLogoURL = "https://cdn.redoc.ly/redoc/logo-mini.svg"
	blankImage   = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
)

// embedded holds assets/README.md (committed) and assets/dist/ (written by
// build/docs-assets.sh, not committed), so a bare clone still compiles.
//
//go:embed assets
var embedded embed.FS

// BundledAssets returns the documentation assets embedded in the binary:
// the files build/docs-assets.sh wrote to openapi/assets/dist before the build,
// possibly none.
func BundledAssets() fs.FS {
	sub, err := fs.Sub(embedded, "assets/dist")
	if err != nil {
		// Unreachable: fs.Sub fails only on an invalid path.
		panic(err)
	}
	return sub
}

// Content-Security-Policy of the pages: everything from this origin only.
// Both bundles inject <style> elements and style attributes ('unsafe-inline'
// styles); both embed SVG images and ReDoc runs its search index in a worker
// made from a blob: URL. No inline script, no eval, no other origin.
const (
	cspSwagger = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	cspRedoc = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// Docs serves the document and the two documentation pages.
type Docs struct {
	spec    *asset
	assets  map[string]*asset
	swagger []byte // page HTML, nil without its assets
	redoc   []byte
}

// DocsOption configures NewDocs.
type DocsOption func(*docsConfig)

type docsConfig struct {
	assets fs.FS
}

// WithAssets serves the vendor files from fsys (files at its root, named as
// build/docs-assets.sh names them) instead of those embedded in the binary.
// A nil fsys means none.
func WithAssets(fsys fs.FS) DocsOption {
	return func(c *docsConfig) { c.assets = fsys }
}

// NewDocs prepares the handlers: the document is serialized once, the pages
// rendered once, and the assets read once.
func NewDocs(doc *openapi3.T, opts ...DocsOption) (*Docs, error) {
	cfg := docsConfig{assets: BundledAssets()}
	for _, o := range opts {
		o(&cfg)
	}
	specJSON, err := MarshalDocument(doc)
	if err != nil {
		return nil, err
	}
	d := &Docs{
		spec:   newAsset(specJSON, "application/json"),
		assets: map[string]*asset{},
	}
	d.assets[fileSwaggerRun] = newAsset([]byte(swaggerInitJS), "text/javascript; charset=utf-8")
	d.assets[fileRedocRun] = newAsset([]byte(redocInitJS), "text/javascript; charset=utf-8")
	if cfg.assets != nil {
		for _, name := range vendorFiles {
			data, err := fs.ReadFile(cfg.assets, name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading documentation asset %s: %w", name, err)
			}
			if name == fileRedocJS {
				data = bytes.ReplaceAll(data, []byte(redocLogoURL), []byte(blankImage))
			}
			d.assets[name] = newAsset(data, contentType(name))
		}
	}

	title := "API"
	if doc.Info != nil && doc.Info.Title != "" {
		title = doc.Info.Title
	}
	if d.has(fileSwaggerJS, fileSwaggerCSS) {
		if d.swagger, err = d.render(swaggerPage, title); err != nil {
			return nil, err
		}
	}
	if d.has(fileRedocJS) {
		if d.redoc, err = d.render(redocPage, title); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// AssetsBundled reports whether both pages can be served.
func (d *Docs) AssetsBundled() bool { return d.swagger != nil && d.redoc != nil }

func (d *Docs) has(names ...string) bool {
	for _, n := range names {
		if d.assets[n] == nil {
			return false
		}
	}
	return true
}

// Routes are GET (and HEAD) /docs, /redoc, /openapi.json and
// /docs/assets/{file}.
func (d *Docs) Routes() []transport.Route {
	get := []string{http.MethodGet}
	return []transport.Route{
		{Methods: get, Path: PathDocs, Purpose: "Interactive documentation UI", Order: 50,
			Handler: d.servePage(func() []byte { return d.swagger }, cspSwagger)},
		{Methods: get, Path: PathRedoc, Purpose: "Alternative documentation UI", Order: 60,
			Handler: d.servePage(func() []byte { return d.redoc }, cspRedoc)},
		{Methods: get, Path: PathSpec, Purpose: "Machine-readable API specification", Order: 70,
			Handler: http.HandlerFunc(d.serveSpec)},
		{Methods: get, Path: PathAssets + "{file}", Handler: http.HandlerFunc(d.serveAsset)},
	}
}

// Register mounts the routes on r.
func (d *Docs) Register(r *mux.Router) {
	for _, rt := range d.Routes() {
		r.Handle(rt.Path, rt.Handler).Methods(append(rt.Methods, http.MethodHead)...)
	}
}

func (d *Docs) serveSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	d.spec.serve(w, r)
}

func (d *Docs) servePage(page func() []byte, csp string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := page()
		if body == nil {
			writeDetail(w, http.StatusServiceUnavailable, MsgDocsUnavailable)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}
}

func (d *Docs) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["file"]
	a := d.assets[name]
	if a == nil {
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	// Pages link assets with ?v=<content hash>: such a URL never changes
	// meaning, so it may be cached for good; any other is revalidated.
	if r.URL.Query().Get("v") == a.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	a.serve(w, r)
}

// render executes a page template with the asset URLs of this Docs.
func (d *Docs) render(t *template.Template, title string) ([]byte, error) {
	urls := map[string]string{}
	for name, a := range d.assets {
		// Relative to the page (/docs or /redoc), so that the pages keep
		// working under a path prefix.
		urls[name] = strings.TrimPrefix(PathAssets, "/") + name + "?v=" + a.version
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct {
		Title  string
		Assets map[string]string
	}{title, urls}); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", t.Name(), err)
	}
	return buf.Bytes(), nil
}

// asset is one file served from memory, with a strong ETag and a gzip copy
// made on first demand.
type asset struct {
	data        []byte
	contentType string
	etag        string
	version     string

	gzipOnce sync.Once
	gz       []byte
}

func newAsset(data []byte, contentType string) *asset {
	sum := sha256.Sum256(data)
	v := hex.EncodeToString(sum[:8])
	return &asset{data: data, contentType: contentType, etag: `"` + v + `"`, version: v}
}

func (a *asset) gzipped() []byte {
	a.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // valid level: no error
		if _, err := zw.Write(a.data); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		if buf.Len() < len(a.data) {
			a.gz = buf.Bytes()
		}
	})
	return a.gz
}

func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	body := a.data
	etag := a.etag
	if len(a.data) > 1024 && acceptsGzip(r) {
		if gz := a.gzipped(); gz != nil {
			body = gz
			etag = `"` + a.version + `-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
		return err == nil && f > 0
	}
	return false
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// writeDetail writes the service's error body.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(map[string]string{"detail": detail}) // a map of strings always marshals
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// MarshalDocument serializes the document as /openapi.json serves it:
// indented, keys sorted, without HTML escaping.
func MarshalDocument(doc *openapi3.T) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("serializing the OpenAPI document: %w", err)
	}
	return buf.Bytes(), nil
}
