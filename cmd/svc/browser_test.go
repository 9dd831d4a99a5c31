package main_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-dev/svc/openapi/browsercheck"
)

// TestDocsInRealBrowser drives headless Chromium through /docs and /redoc
// of the real server: "Try it out" → "Execute" gets a 200, ReDoc shows the
// input names, and no request leaves the server's origin. Screenshots go to
// build/artifacts/screenshots/.
func TestDocsInRealBrowser(t *testing.T) {
	chromium := os.Getenv("SVC_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("Chromium not found at %s: run 'make tools' (ci/install-deps.sh installs Debian's chromium)", chromium)
	}
	for _, m := range []struct{ name, path string }{
		{"demo", filepath.Join(repoRoot, "examples", "demo")},
		{"multi_input", model("multi_input.onnx")},
	} {
		t.Run(m.name, func(t *testing.T) {
			s := startServer(t, m.path)
			var names []string
			for _, in := range s.get("/info").JSON(t)["inputs"].([]any) {
				names = append(names, in.(map[string]any)["name"].(string))
			}
			shots := filepath.Join(repoRoot, "build", "artifacts", "screenshots", m.name)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := browsercheck.RunBrowserChecks(ctx, chromium, s.URL, shots, names); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{browsercheck.ShotDocs, browsercheck.ShotExecuted, browsercheck.ShotRedoc} {
				if st, err := os.Stat(filepath.Join(shots, f)); err != nil || st.Size() < 1000 {
					t.Errorf("screenshot %s missing or empty: %v", f, err)
				}
			}
			// The executed request went through the real /predict.
			if n := countPath(s.accessLogs(), "/predict", 200); n < 1 {
				t.Errorf("no successful /predict in the server's log:\n%s", s.stderr)
			}
		})
	}
}

func countPath(records []map[string]any, path string, status int) int {
	n := 0
	for _, r := range records {
		if r["path"] == path && r["status"] == float64(status) {
			n++
		}
	}
	return n
}
