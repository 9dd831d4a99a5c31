package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/svc-dev/svc/ci/browser"
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/openapi"
	"github.com/svc-dev/svc/transport/rest"
)

// chromium finds the browser: $SVC_CHROMIUM, else chromium on the PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SVC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: run 'make tools' (ci/install-deps.sh installs Debian's chromium) or set SVC_CHROMIUM")
	return ""
}

func classifier(t *testing.T) core.ModelInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "openapi", "testdata", "info", "classifier.json"))
	if err != nil {
		t.Fatal(err)
	}
	var info rest.Info
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	return info.Model()
}

// server mounts the documentation of the classifier and a /predict that
// validates the body and answers with fixed outputs (or with status).
func server(t *testing.T, predictStatus int, extra func(r *mux.Router)) *httptest.Server {
	t.Helper()
	doc, err := openapi.Build(classifier(t))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := openapi.NewDocs(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !docs.AssetsBundled() {
		t.Fatal("documentation assets are not embedded: run build/docs-assets.sh (make assets) first")
	}
	v, err := openapi.NewValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	if extra != nil {
		extra(r)
	}
	docs.Register(r)
	r.HandleFunc("/predict", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, err := io.ReadAll(req.Body)
		if err == nil {
			err = v.ValidateBody(req.Context(), body)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"detail": err.Error()})
			return
		}
		if predictStatus != http.StatusOK {
			w.WriteHeader(predictStatus)
			fmt.Fprint(w, `{"detail": "Inference failed: test"}`)
			return
		}
		fmt.Fprint(w, `{"probabilities": [[0.1, 0.2, 0.7]], "label": [2]}`)
	}).Methods(http.MethodPost)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func TestRunBrowserChecks(t *testing.T) {
	srv := server(t, http.StatusOK, nil)
	dir := t.TempDir()
	if out := os.Getenv("SVC_SCREENSHOTS"); out != "" {
		dir = out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := browser.RunBrowserChecks(ctx, chromium(t), srv.URL, dir, []string{"input"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{browser.ShotDocs, browser.ShotExecuted, browser.ShotRedoc} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() < 10_000 {
			t.Errorf("screenshot %s missing or blank (%v)", name, err)
		}
	}
}

// TestRunBrowserChecksFails proves the checks can fail: /predict answers 500,
// and /redoc is replaced by a page that loads an image from another origin
// (another local server) and lacks an input name.
func TestRunBrowserChecksFails(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/gif")
		_, _ = w.Write([]byte("GIF89a"))
	}))
	t.Cleanup(other.Close)
	srv := server(t, http.StatusInternalServerError, func(r *mux.Router) {
		r.HandleFunc("/redoc", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><html><body><p>/predict</p><img src="%s/pixel.gif"></body></html>`, other.URL)
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := browser.RunBrowserChecks(ctx, chromium(t), srv.URL, t.TempDir(), []string{"input", "no_such_input"})
	if err == nil {
		t.Fatal("RunBrowserChecks passed against a broken server")
	}
	msg := err.Error()
	for _, want := range []string{`'Execute' answered "500`, "requests left", other.URL + "/pixel.gif", `"no_such_input"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}
